// RunCli with captured streams and no agent listening, for the client's
// flag tests.
#pragma once

#include <sstream>
#include <string>
#include <vector>

#include "client/cli.h"

namespace gpuctl::client {

inline constexpr const char* kNoAgent = "unix:/nonexistent/gpuctl-test/x.sock";

struct CliRun {
  int code = -1;
  std::string out;
  std::string err;
};

inline CliRun RunGpuctl(const std::vector<std::string>& args) {
  std::ostringstream out;
  std::ostringstream err;
  Console console{out, err, false};
  CliRun run;
  run.code = RunCli(args, console, kNoAgent);
  run.out = out.str();
  run.err = err.str();
  return run;
}

}  // namespace gpuctl::client
