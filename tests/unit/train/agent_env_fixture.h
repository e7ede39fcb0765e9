// The agent's environment for launchers under test (job_environment.h): a
// PATH whose first directory holds stand-ins for the programs the tests'
// jobs name (python, pip, torchrun), so that a start's check that the
// command exists passes on a host without them, and the launch argv does
// not depend on the environment the tests run in.
#pragma once

#include <sys/stat.h>

#include <filesystem>
#include <fstream>
#include <map>
#include <string>

namespace gpuctl::testing {

inline std::map<std::string, std::string> AgentEnvWithPrograms(const std::string& dir) {
  const std::string bin = dir + "/fake-bin";
  std::filesystem::create_directories(bin);
  for (const char* name : {"python", "python3", "pip", "torchrun"}) {
    const std::string path = bin + "/" + name;
    std::ofstream(path) << "#!/bin/sh\nexit 0\n";
    ::chmod(path.c_str(), 0755);
  }
  return {{"PATH", bin + ":/usr/bin:/bin"}, {"LANG", "C.UTF-8"}};
}

}  // namespace gpuctl::testing
