// The memory guard for real: a 1 GiB memory cgroup as the guard's domain, a
// job that grows at >= 1 GiB/s inside it, and gpuctld killing it before the
// kernel's OOM killer does, while staying reachable. Needs root and a
// writable cgroup v1 memory hierarchy (as on the machines here and in CI);
// skips with the reason elsewhere.
#include <gtest/gtest.h>
#include <grpcpp/grpcpp.h>
#include <signal.h>
#include <unistd.h>

#include <atomic>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>
#include <thread>

#include "gpuctl/v1/agent.grpc.pb.h"
#include "tests/fakes/temp_dir.h"
#include "tests/integration/process_support.h"
#include "tests/privileged/memory_cgroup_support.h"
#include "tests/fakes/skip_policy.h"
#include "common/units.h"

namespace gpuctl::testing {
namespace {

using nlohmann::json;
class GuardKill : public ::testing::Test {
 protected:
  void SetUp() override {
    if (geteuid() != 0) GPUCTL_SKIP() << "needs root to create memory cgroups";
    if (!std::filesystem::exists(kMemoryRoot + "/memory.limit_in_bytes")) {
      GPUCTL_SKIP_ALLOWED(kPlatform) << "no cgroup v1 memory hierarchy at " << kMemoryRoot << " (a v2 host)";
    }
    if (Counter("/proc/meminfo", "SwapTotal:") > 0) {
      GPUCTL_SKIP_ALLOWED(kPlatform) << "swap is on: a 1 GiB domain would swap rather than run out";
    }
    domain_ = OwnMemoryCgroup() + "/gpuctl-guard-test-" + std::to_string(getpid());
    domain_dir_ = kMemoryRoot + domain_;
    if (mkdir(domain_dir_.c_str(), 0755) != 0) GPUCTL_SKIP() << "cannot create " << domain_dir_;
    std::ofstream(domain_dir_ + "/memory.limit_in_bytes") << kGiB;
    tmux_ = "gpuctl-guard-" + std::to_string(getpid());
  }

  void TearDown() override {
    if (agent_) {
      agent_->Signal(SIGTERM);
      agent_->WaitForExit(std::chrono::seconds(5));
    }
    RunProgram({"tmux", "-L", tmux_, "kill-server"});
    if (!domain_dir_.empty()) KillAndRemove(domain_dir_);
  }

  std::string Socket() const { return dir_.path() + "/s.sock"; }
  RunResult Gpuctl(std::vector<std::string> args) const {
    std::vector<std::string> argv = {BinaryPath("gpuctl"), "--agent", "unix:" + Socket()};
    argv.insert(argv.end(), args.begin(), args.end());
    return RunProgram(argv);
  }

  TempDir dir_;
  std::string domain_, domain_dir_, tmux_;
  std::unique_ptr<BackgroundProcess> agent_;
};

TEST_F(GuardKill, KillsARunawayJobBeforeTheKernelAndStaysReachable) {
  agent_ = std::make_unique<BackgroundProcess>(
      std::vector<std::string>{BinaryPath("gpuctld"), "--listen", "unix:" + Socket(), "--state-dir",
                               dir_.path() + "/state", "--tmux-socket", tmux_, "--nvml-library", "/nonexistent",
                               "--nvidia-smi", "/nonexistent", "--guard-domain", "cgroup:" + domain_},
      dir_.path() + "/gpuctld.log");
  ASSERT_TRUE(WaitUntil([&] { return Gpuctl({"health"}).exit_code == 0; }, std::chrono::seconds(10)))
      << ReadText(dir_.path() + "/gpuctld.log");

  // GetHealth all through the episode, on a channel of its own.
  auto channel = grpc::CreateChannel("unix:" + Socket(), grpc::InsecureChannelCredentials());
  auto stub = v1::Agent::NewStub(channel);
  std::atomic<bool> done{false};
  std::atomic<int> ok_calls{0}, failed_calls{0};
  std::thread health([&] {
    while (!done) {
      grpc::ClientContext context;
      context.set_deadline(std::chrono::system_clock::now() + std::chrono::seconds(2));
      v1::HealthSnapshot snapshot;
      (stub->GetHealth(&context, v1::GetHealthRequest(), &snapshot).ok() ? ok_calls : failed_calls)++;
      std::this_thread::sleep_for(std::chrono::milliseconds(5));
    }
  });

  RunResult started = Gpuctl({"train", "start", "--name", "hog", "--", BinaryPath("tests/grow_memory"), "1.5", "4"});
  ASSERT_EQ(started.exit_code, 0) << started.err;
  json job;
  WaitUntil([&] {
    RunResult r = Gpuctl({"-o", "json", "train", "status", "hog"});
    if (r.exit_code == 0) job = json::parse(r.out);
    return job.value("state", "") != "running" && job.value("state", "") != "starting" && !job.is_null();
  }, std::chrono::seconds(20));
  // Keep calling a little after the kill too.
  std::this_thread::sleep_for(std::chrono::milliseconds(300));
  done = true;
  health.join();

  EXPECT_EQ(job.value("state", ""), "killed_by_guard") << job.dump(2) << ReadText(dir_.path() + "/gpuctld.log");
  EXPECT_EQ(Counter(domain_dir_ + "/memory.oom_control", "oom_kill"), 0u) << "the kernel's OOM killer fired in the domain";
  EXPECT_TRUE(agent_->running()) << "gpuctld died";
  EXPECT_GE(ok_calls.load(), 50);
  EXPECT_EQ(failed_calls.load(), 0);

  RunResult events = Gpuctl({"-o", "json", "events"});
  ASSERT_EQ(events.exit_code, 0) << events.err;
  json kill;
  std::istringstream lines(events.out);
  for (std::string line; std::getline(lines, line);) {
    json e = json::parse(line);
    if (e["kind"] == "guard_kill") kill = e;
  }
  ASSERT_FALSE(kill.is_null()) << events.out;
  EXPECT_EQ(kill["job"], "hog");
  EXPECT_TRUE(kill["fields"]["reaction_ms"].is_number());
  EXPECT_GT(kill["fields"]["victim_memory_bytes"].get<uint64_t>(), kGiB / 2);
  EXPECT_GT(kill["fields"]["freed_bytes"].get<uint64_t>(), kGiB / 4);
  std::cout << "guard reaction " << kill["fields"]["reaction_ms"] << " ms, " << ok_calls << " GetHealth calls ok\n";
}

TEST_F(GuardKill, BadGuardSettingsRefuseTheStart) {
  RunResult r = RunProgram({BinaryPath("gpuctld"), "--listen", "unix:" + Socket(), "--state-dir",
                            dir_.path() + "/state", "--guard-domain", "cgroup:" + domain_ + "/no-such"});
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.err.find("no such cgroup"), std::string::npos) << r.err;
  r = RunProgram({BinaryPath("gpuctld"), "--listen", "unix:" + Socket(), "--state-dir", dir_.path() + "/state",
                  "--guard-reserve", "64T"});
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.err.find("reserve"), std::string::npos) << r.err;
  r = RunProgram({BinaryPath("gpuctld"), "--listen", "unix:" + Socket(), "--state-dir", dir_.path() + "/state",
                  "--cgroup-parent", domain_ + "/memory.limit_in_bytes/x"});
  EXPECT_NE(r.exit_code, 0);
  EXPECT_NE(r.err.find("cannot create the job cgroup"), std::string::npos) << r.err;
}

}  // namespace
}  // namespace gpuctl::testing
