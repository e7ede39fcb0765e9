#include "tests/integration/train_fixture.h"

#include <signal.h>
#include <unistd.h>

#include <atomic>
#include <filesystem>
#include <fstream>
#include <sstream>

namespace gpuctl::testing {

void TrainFixture::SetUp() {
  static std::atomic<int> counter{0};
  tmux_socket_ = "gpuctl-test-" + std::to_string(getpid()) + "-" + std::to_string(counter++);
}

void TrainFixture::TearDown() {
  RunProgram({"tmux", "-L", tmux_socket_, "kill-server"});
  // The test's cgroup parent and its job cgroups (v1 memory or v2 mounts).
  for (const std::string root : {"/sys/fs/cgroup/memory/", "/sys/fs/cgroup/"}) {
    std::string parent = root + tmux_socket_;
    std::error_code ec;
    if (!std::filesystem::exists(parent, ec)) continue;
    WaitUntil([&] {
      for (const auto& entry : std::filesystem::directory_iterator(parent, ec)) {
        if (!entry.is_directory()) continue;
        // Jobs a test left running (their wrapper outlives tmux by design).
        std::ifstream procs(entry.path() / "cgroup.procs");
        for (pid_t pid = 0; procs >> pid;) kill(pid, SIGKILL);
        rmdir(entry.path().c_str());
      }
      return rmdir(parent.c_str()) == 0;
    }, std::chrono::seconds(5));
  }
}

std::vector<std::string> TrainFixture::AgentFlags() const {
  std::vector<std::string> flags = {"--tmux-socket", tmux_socket_, "--pct",
                                    std::string(GPUCTL_SOURCE_DIR) + "/tests/fakes/bin/pct", "--lxc-rootfs",
                                    dir_.path() + "/lxc/{vmid}/rootfs"};
  // As root, jobs run in memory cgroups of their own under a parent unique
  // to this test (removed in TearDown); elsewhere without cgroups.
  if (geteuid() == 0) {
    flags.insert(flags.end(), {"--guard", "on", "--cgroup-parent", "/" + tmux_socket_});
  }
  return flags;
}

std::map<std::string, std::string> TrainFixture::AgentEnv() const {
  return {{"FAKE_PCT_RUNNING", "200"},
          {"FAKE_PCT_STOPPED", "201"},
          {"FAKE_PCT_ROOT", dir_.path() + "/lxc"},
          {"FAKE_PCT_LOG", dir_.path() + "/pct.log"}};
}

nlohmann::json TrainFixture::Status(const std::string& name) const {
  RunResult r = Gpuctl({"-o", "json", "train", "status", name});
  if (r.exit_code != 0) return {{"error", r.err}, {"exit_code", r.exit_code}};
  return nlohmann::json::parse(r.out);
}

nlohmann::json TrainFixture::WaitForEnd(const std::string& name, std::chrono::milliseconds timeout) {
  nlohmann::json job;
  WaitUntil([&] {
    job = Status(name);
    std::string state = job.value("state", "");
    return !state.empty() && state != "starting" && state != "running";
  }, timeout);
  return job;
}

std::string TrainFixture::ReadFile(const std::string& path) const {
  std::ifstream in(path, std::ios::binary);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

bool TrainFixture::TmuxHasSession(const std::string& session) const {
  return RunProgram({"tmux", "-L", tmux_socket_, "has-session", "-t", "=" + session}).exit_code == 0;
}

}  // namespace gpuctl::testing
