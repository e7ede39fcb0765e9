#include "tests/integration/agent_fixture.h"

#include <fstream>
#include <sstream>

namespace gpuctl::testing {

std::string AgentFixture::AgentLog() const {
  std::ifstream in(LogPath());
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

void AgentFixture::StartAgent(std::vector<std::string> extra, std::map<std::string, std::string> env) {
  std::vector<std::string> argv = {BinaryPath("gpuctld"), "--state-dir", StateDir(),
                                   "--nvml-library", dir_.path() + "/no-nvml.so",
                                   "--nvidia-smi", dir_.path() + "/no-nvidia-smi"};
  bool has_listen = false, has_guard = false;
  for (const std::string& a : extra) {
    has_listen = has_listen || a == "--listen";
    has_guard = has_guard || a == "--guard";
  }
  // The guard creates memory cgroups; tests that do not ask for it keep the
  // host's cgroup tree untouched.
  if (!has_guard) argv.insert(argv.end(), {"--guard", "off"});
  if (!has_listen) {
    argv.push_back("--listen");
    argv.push_back(UnixAddress());
  }
  argv.insert(argv.end(), extra.begin(), extra.end());
  if (address_.empty()) address_ = UnixAddress();
  agent_ = std::make_unique<BackgroundProcess>(argv, LogPath(), env);
  bool up = WaitUntil([&] { return Gpuctl({"health"}).exit_code == 0 || !agent_->running(); },
                      std::chrono::seconds(15));
  ASSERT_TRUE(up && agent_->running()) << "gpuctld did not come up:\n" << AgentLog();
}

RunResult AgentFixture::Gpuctl(std::vector<std::string> args, std::map<std::string, std::string> env) const {
  std::vector<std::string> argv = {BinaryPath("gpuctl"), "--agent", address_};
  argv.insert(argv.end(), args.begin(), args.end());
  return RunProgram(argv, env);
}

}  // namespace gpuctl::testing
