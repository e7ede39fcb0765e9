// MemoryGuard::CheckOnce over fakes: a fixture /proc, the fake cgroup driver
// and process control, a fake clock. What it kills, what it spares, what it
// says.
#include "agents/guard/memory_guard.h"

#include <gtest/gtest.h>
#include <signal.h>

#include "agents/sys/host_fs.h"
#include "tests/fakes/fake_cgroup_driver.h"
#include "tests/fakes/fake_clock.h"
#include "tests/fakes/fake_process_control.h"
#include "tests/fakes/temp_dir.h"
#include "tests/unit/guard/proc_fixture.h"
#include "common/units.h"

namespace gpuctl::guard {
namespace {

using gpuctl::testing::FakeCgroupDriver;
using gpuctl::testing::FakeClock;
using gpuctl::testing::FakeProcessControl;
using gpuctl::testing::TempDir;
using testing::FixtureProcess;
using testing::WriteProcess;


class FakeWork final : public GuardedWork {
 public:
  std::vector<GuardedWorkItem> items;
  std::vector<std::string> will_kill;
  std::vector<GuardedWorkItem> Running() override { return items; }
  void WillKill(const std::string& name, const std::string&) override { will_kill.push_back(name); }
  // A governed build's relief: true while its governor can still pause.
  bool Relieve(const std::string& name) override {
    relieved.push_back(name);
    return can_relieve;
  }
  bool can_relieve = false;
  std::vector<std::string> relieved;
};

// Records where the guard armed the kernel's wake-up.
class RecordingWaiter final : public sys::MemoryPressureWaiter {
 public:
  explicit RecordingWaiter(std::vector<std::vector<uint64_t>>& armed) : armed_(armed) {}
  Result<sys::WaitOutcome> Wait(std::chrono::milliseconds) override { return sys::WaitOutcome::kTimedOut; }
  Status ArmAt(const std::vector<uint64_t>& usage_lines) override {
    armed_.push_back(usage_lines);
    return Status::Ok();
  }

 private:
  std::vector<std::vector<uint64_t>>& armed_;
};

class MemoryGuardTest : public ::testing::Test {
 protected:
  MemoryGuardTest() {
    SetHostAvailable(32 * kGiB);
    WriteProcess(dir_, {.pid = 1, .comm = "init"});
  }
  void SetHostAvailable(uint64_t available) {
    dir_.WriteFile("proc/meminfo", "MemTotal:       " + std::to_string(64 * kGiB / 1024) +
                                       " kB\nMemFree:        1024 kB\nMemAvailable:   " +
                                       std::to_string(available / 1024) + " kB\nSwapTotal: 0 kB\nSwapFree: 0 kB\n");
  }
  std::unique_ptr<MemoryGuard> Guard(GuardConfig config, std::unique_ptr<sys::MemoryPressureWaiter> waiter = nullptr) {
    MemoryGuardDeps deps{.fs = fs_,
                         .cgroups = &cgroups_,
                         .processes = procs_,
                         .clock = clock_,
                         .work = work_,
                         .publish = [this](GuardEvent e) { events_.push_back(std::move(e)); },
                         .heartbeat = [] {},
                         .agent_pid = 4242};
    return std::make_unique<MemoryGuard>(std::move(config), deps, std::move(waiter));
  }
  std::vector<std::string> EventKinds() const {
    std::vector<std::string> kinds;
    for (const GuardEvent& e : events_) kinds.push_back(e.kind);
    return kinds;
  }

  TempDir dir_;
  sys::HostFs fs_{dir_.path()};
  FakeCgroupDriver cgroups_;
  FakeProcessControl procs_;
  FakeClock clock_;
  FakeWork work_;
  std::vector<GuardEvent> events_;
};

GuardConfig HostConfig() {
  GuardConfig config;
  config.reserve_bytes = 2 * kGiB;
  return config;
}

TEST_F(MemoryGuardTest, AboveTheLineNothingHappens) {
  cgroups_.Put("/gpuctl", {});
  cgroups_.Put("/gpuctl/big@r1", {.current = 8 * kGiB});
  work_.items = {{"big", "/gpuctl/big@r1", 500}};
  Guard(HostConfig())->CheckOnce();
  EXPECT_TRUE(cgroups_.kills().empty());
  EXPECT_TRUE(work_.will_kill.empty());
}

TEST_F(MemoryGuardTest, BelowTheLineTheBiggestJobIsKilledWholeAndMarked) {
  cgroups_.Put("/gpuctl", {});
  cgroups_.Put("/gpuctl/small@r1", {.current = 1 * kGiB});
  cgroups_.Put("/gpuctl/big@r2", {.current = 8 * kGiB});
  work_.items = {{"small", "/gpuctl/small@r1", 500}, {"big", "/gpuctl/big@r2", 600}};
  SetHostAvailable(1 * kGiB);
  Guard(HostConfig())->CheckOnce();
  EXPECT_EQ(cgroups_.kills(), (std::vector<std::string>{"/gpuctl/big@r2"}));
  EXPECT_EQ(work_.will_kill, (std::vector<std::string>{"big"}));
  ASSERT_FALSE(events_.empty());
  const GuardEvent& kill = events_.back();
  EXPECT_EQ(kill.kind, "guard_kill");
  EXPECT_EQ(kill.job, "big");
  EXPECT_EQ(kill.fields["victim_cgroup"], "/gpuctl/big@r2");
  EXPECT_EQ(kill.fields["killed"], true);
}

// A governed build below the line pauses its compiles first: the guard holds
// its kill while the governor still can, for at most kReliefWindow, then
// kills if the domain is still below the line.
TEST_F(MemoryGuardTest, AGovernedBuildIsAskedToPauseBeforeItIsKilled) {
  cgroups_.Put("/gpuctl", {});
  cgroups_.Put("/gpuctl/b@r1", {.current = 8 * kGiB});
  work_.items = {{"b", "/gpuctl/b@r1", 600}};
  work_.can_relieve = true;
  SetHostAvailable(1 * kGiB);
  auto guard = Guard(HostConfig());
  guard->CheckOnce();
  EXPECT_EQ(work_.relieved, (std::vector<std::string>{"b"}));
  EXPECT_TRUE(cgroups_.kills().empty()) << "held while the governor pauses";
  clock_.Advance(kReliefWindow / 2);
  guard->CheckOnce();
  EXPECT_TRUE(cgroups_.kills().empty());
  clock_.Advance(kReliefWindow);  // still below the line after the window
  guard->CheckOnce();
  EXPECT_EQ(cgroups_.kills(), (std::vector<std::string>{"/gpuctl/b@r1"}));
  EXPECT_EQ(events_.back().kind, "guard_kill");
}

TEST_F(MemoryGuardTest, WithNothingLeftToPauseTheBuildIsKilledAtOnce) {
  cgroups_.Put("/gpuctl", {});
  cgroups_.Put("/gpuctl/b@r1", {.current = 8 * kGiB});
  work_.items = {{"b", "/gpuctl/b@r1", 600}};
  SetHostAvailable(1 * kGiB);
  Guard(HostConfig())->CheckOnce();
  EXPECT_EQ(work_.relieved, (std::vector<std::string>{"b"}));
  EXPECT_EQ(cgroups_.kills(), (std::vector<std::string>{"/gpuctl/b@r1"}));
}

// The case: 1.34 GiB of a 3 GiB domain, plus 1.37 GB of file cache
// charged to it. It used to be killed; cache is reclaimable, the job fits.
TEST_F(MemoryGuardTest, FileCacheInACgroupDomainDoesNotGetAFittingJobKilled) {
  const uint64_t job = 1340 * kMiB, cache = 1370ull * 1000 * 1000;
  cgroups_.Put("/lxc", {});
  cgroups_.Put("/lxc/c1", {.max = 3 * kGiB, .current = job + cache, .reclaimable_file = cache});
  cgroups_.Put("/lxc/c1/gpuctl", {});
  cgroups_.Put("/lxc/c1/gpuctl/train@r1", {.current = job + cache});
  work_.items = {{"train", "/lxc/c1/gpuctl/train@r1", 700}};
  GuardConfig config;
  config.domain = {GuardDomain::Kind::kCgroup, "/lxc/c1"};
  config.reserve_bytes = 512 * kMiB;
  auto guard = Guard(config);
  guard->CheckOnce();
  EXPECT_TRUE(cgroups_.kills().empty()) << "killed for cache";
  // The same job without the cache to reclaim is over the line.
  cgroups_.Put("/lxc/c1", {.max = 3 * kGiB, .current = job + cache, .reclaimable_file = 0});
  guard->CheckOnce();
  EXPECT_EQ(cgroups_.kills(), (std::vector<std::string>{"/lxc/c1/gpuctl/train@r1"}));
}

// The regression: the v1 threshold stayed at the usage of the warn
// line without cache, so with cache in the domain the guard waited for its
// backstop poll. Each reading re-arms it at the usage where the guard's own
// lines are reached with the cache that reading saw, and the poll shortens
// as the kill line nears whatever the kernel reports.
TEST_F(MemoryGuardTest, TheWakeUpIsArmedAtTheDecisionLinesAfterTheCacheChanges) {
  cgroups_.Put("/lxc", {});
  cgroups_.Put("/lxc/c1", {.max = 2 * kGiB, .current = 512 * kMiB, .reclaimable_file = 0});
  GuardConfig config;
  config.domain = {GuardDomain::Kind::kCgroup, "/lxc/c1"};
  config.reserve_bytes = 256 * kMiB;  // kill below 256 MiB left, warn below 512 MiB
  std::vector<std::vector<uint64_t>> armed;
  auto guard = Guard(config, std::make_unique<RecordingWaiter>(armed));

  WakePlan plan = guard->CheckOnce();
  ASSERT_EQ(armed.size(), 1u);
  EXPECT_EQ(armed.back(), (std::vector<uint64_t>{1536 * kMiB, 1792 * kMiB}));
  EXPECT_EQ(plan.poll, config.poll_interval) << "1.25 GiB from the kill line";

  // A job reads its dataset: 200 MiB of cache, the same work. The lines move
  // 200 MiB further on in usage.
  clock_.Advance(std::chrono::milliseconds(100));
  cgroups_.Put("/lxc/c1", {.max = 2 * kGiB, .current = 712 * kMiB, .reclaimable_file = 200 * kMiB});
  guard->CheckOnce();
  ASSERT_EQ(armed.size(), 2u);
  EXPECT_EQ(armed.back(), (std::vector<uint64_t>{1736 * kMiB, 1992 * kMiB}));

  // The work grows to 40 MiB above the warn line: both lines stay where they
  // are (usage moved with it one for one), the poll is down to the last stretch.
  clock_.Advance(std::chrono::milliseconds(100));
  cgroups_.Put("/lxc/c1", {.max = 2 * kGiB, .current = 1696 * kMiB, .reclaimable_file = 200 * kMiB});
  plan = guard->CheckOnce();
  EXPECT_EQ(armed.back(), (std::vector<uint64_t>{1736 * kMiB, 1992 * kMiB}));
  EXPECT_LT(plan.poll, config.poll_interval);
  EXPECT_TRUE(cgroups_.kills().empty());

  // The cache is reclaimed near the limit: the lines come back with it.
  clock_.Advance(std::chrono::milliseconds(5));
  cgroups_.Put("/lxc/c1", {.max = 2 * kGiB, .current = 1500 * kMiB, .reclaimable_file = 0});
  plan = guard->CheckOnce();
  EXPECT_EQ(armed.back(), (std::vector<uint64_t>{1536 * kMiB, 1792 * kMiB}));
}

// --guard-unmanaged in a cgroup domain: a process outside the domain frees
// nothing there and is never the victim.
TEST_F(MemoryGuardTest, UnmanagedVictimsComeFromInsideTheDomainOnly) {
  cgroups_.Put("/lxc", {});
  cgroups_.Put("/lxc/c1", {.max = 2 * kGiB, .current = 2 * kGiB});
  WriteProcess(dir_, {.pid = 100, .comm = "hog-outside", .rss_kib = 8 << 20, .oom_score = 900,
                      .memory_cgroup = "/user.slice"});
  GuardConfig config;
  config.domain = {GuardDomain::Kind::kCgroup, "/lxc/c1"};
  config.reserve_bytes = 256 * kMiB;
  config.guard_unmanaged = true;
  auto guard = Guard(config);
  guard->CheckOnce();
  EXPECT_TRUE(procs_.signals().empty());
  EXPECT_EQ(EventKinds(), (std::vector<std::string>{"guard_no_victim"}));

  WriteProcess(dir_, {.pid = 200, .comm = "hog-inside", .rss_kib = 1 << 20, .oom_score = 500,
                      .memory_cgroup = "/lxc/c1/user"});
  procs_.AddProcess(200, 200, 1);
  guard->CheckOnce();
  ASSERT_FALSE(procs_.signals().empty());
  EXPECT_EQ(procs_.signals().front().target, 200);
  EXPECT_EQ(procs_.signals().front().sig, SIGKILL);
}

TEST(WithinDomainTest, HostTakesAllCgroupTakesItsSubtree) {
  std::vector<ProcessInfo> procs(4);
  procs[0].memory_cgroup = "/lxc/c1";
  procs[1].memory_cgroup = "/lxc/c1/a/b";
  procs[2].memory_cgroup = "/lxc/c10";
  procs[3].memory_cgroup = "";
  EXPECT_EQ(WithinDomain(procs, {}).size(), 4u);
  std::vector<ProcessInfo> inside = WithinDomain(procs, {GuardDomain::Kind::kCgroup, "/lxc/c1"});
  ASSERT_EQ(inside.size(), 2u);
  EXPECT_EQ(inside[1].memory_cgroup, "/lxc/c1/a/b");
}

}  // namespace
}  // namespace gpuctl::guard
