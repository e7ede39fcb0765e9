// The bash completion script, run for real (global_flags_test.cc,
// everyday_commands_test.cc).
#pragma once

#include <cstdio>
#include <fstream>
#include <string>

#include "tests/fakes/temp_dir.h"

namespace gpuctl::client {

// Runs a `gpuctl completion bash` script in a real bash, with COMP_WORDS
// as bash would fill them ("gpuctl train lo", cword 2), and returns what it
// offers (COMPREPLY, space-separated, with a newline).
inline std::string RunBashCompletion(const std::string& script, const std::string& words, int cword) {
  testing::TempDir dir;
  std::string path = dir.path() + "/completion.bash";
  std::ofstream(path) << script;
  std::string command = "bash -c 'source " + path + "; COMP_WORDS=(" + words + "); COMP_CWORD=" +
                        std::to_string(cword) + "; _gpuctl; echo \"${COMPREPLY[*]}\"'";
  FILE* pipe = ::popen(command.c_str(), "r");
  std::string out;
  char buf[4096];
  while (size_t n = std::fread(buf, 1, sizeof buf, pipe)) out.append(buf, n);
  ::pclose(pipe);
  return out;
}

}  // namespace gpuctl::client
