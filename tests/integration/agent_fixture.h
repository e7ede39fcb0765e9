// A real gpuctld on a private socket (and optionally loopback TCP) in a temp
// dir, for tests that drive it with the real gpuctl binary.
#pragma once

#include <sys/stat.h>

#include <memory>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "tests/fakes/temp_dir.h"
#include "tests/integration/process_support.h"

namespace gpuctl::testing {

class AgentFixture : public ::testing::Test {
 protected:
  // Socket under a directory gpuctld must create itself (to check its mode).
  std::string SocketPath() const { return dir_.path() + "/run/gpuctl.sock"; }
  std::string UnixAddress() const { return "unix:" + SocketPath(); }
  std::string StateDir() const { return dir_.path() + "/state"; }
  std::string LogPath() const { return dir_.path() + "/gpuctld.log"; }
  std::string AgentLog() const;

  // Starts gpuctld with `extra` flags and waits until it answers health.
  // No NVML and no nvidia-smi unless `extra` names them.
  void StartAgent(std::vector<std::string> extra = {}, std::map<std::string, std::string> env = {});
  RunResult Gpuctl(std::vector<std::string> args, std::map<std::string, std::string> env = {}) const;

  TempDir dir_;
  std::unique_ptr<BackgroundProcess> agent_;
  std::string address_;  // what gpuctl --agent gets
};

}  // namespace gpuctl::testing
