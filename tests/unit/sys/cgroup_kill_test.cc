// KillUntilEmpty over a scripted cgroup.procs and the fake process control:
// every listed pid gets SIGKILL each round, and its memory is released once,
// after the whole round's signals.
#include "agents/sys/cgroup_kill.h"

#include <gtest/gtest.h>
#include <signal.h>

#include "tests/fakes/fake_process_control.h"

namespace gpuctl::sys {
namespace {

using gpuctl::testing::FakeProcessControl;
using namespace std::chrono_literals;

// cgroup.procs as it reads round by round; empty once the script is done.
ListProcesses ScriptedProcs(std::vector<std::vector<int64_t>> rounds) {
  return [rounds = std::move(rounds), next = size_t{0}]() mutable -> Result<std::vector<int64_t>> {
    return next < rounds.size() ? rounds[next++] : std::vector<int64_t>{};
  };
}

TEST(KillUntilEmptyTest, SignalsEveryRoundAndReleasesEachPidOnceAfterItsSignal) {
  FakeProcessControl processes;
  // 101 forks 102 between the first read and its kill.
  Status s = KillUntilEmpty(ScriptedProcs({{100, 101}, {101, 102}}), processes, KillMode::kSignal, 1s, "cgroup t");
  ASSERT_TRUE(s.ok()) << s.ToString();
  std::vector<int64_t> killed;
  for (const auto& sent : processes.signals()) {
    EXPECT_EQ(sent.sig, SIGKILL);
    killed.push_back(sent.target);
  }
  EXPECT_EQ(killed, (std::vector<int64_t>{100, 101, 101, 102}));
  EXPECT_EQ(processes.released(), (std::vector<int64_t>{100, 101, 102}));
}

// After cgroup.kill the kernel has signalled them: only the release and the wait.
TEST(KillUntilEmptyTest, WaitOnlySendsNothingButStillReleases) {
  FakeProcessControl processes;
  ASSERT_TRUE(KillUntilEmpty(ScriptedProcs({{7, 8}}), processes, KillMode::kWaitOnly, 1s, "cgroup t").ok());
  EXPECT_TRUE(processes.signals().empty());
  EXPECT_EQ(processes.released(), (std::vector<int64_t>{7, 8}));
}

TEST(KillUntilEmptyTest, SurvivorsPastTheTimeoutAreNamed) {
  FakeProcessControl processes;
  ListProcesses stuck = [] { return Result<std::vector<int64_t>>(std::vector<int64_t>{55}); };
  Status s = KillUntilEmpty(stuck, processes, KillMode::kSignal, 5ms, "cgroup t");
  EXPECT_EQ(s.code(), ErrorCode::kUnavailable);
  EXPECT_NE(s.message().find("55"), std::string::npos) << s.message();
  EXPECT_EQ(processes.released(), (std::vector<int64_t>{55})) << "released once, not every round";
}

}  // namespace
}  // namespace gpuctl::sys
