// Decisions over readings and over processes read from /proc fixture trees.
#include "agents/guard/decide.h"

#include <gtest/gtest.h>

#include "agents/guard/process_scan.h"
#include "tests/fakes/temp_dir.h"
#include "tests/unit/guard/proc_fixture.h"
#include "common/units.h"

namespace gpuctl::guard {
namespace {

using gpuctl::testing::TempDir;
using testing::FixtureProcess;
using testing::kKernelThreadFlags;
using testing::WriteProcess;

constexpr int64_t kAgentPid = 4000;

GuardConfig Config() {
  GuardConfig config;
  config.reserve_bytes = 1 * kGiB;
  config.warn_margin_bytes = 1 * kGiB;
  return config;
}

DomainReading Reading(uint64_t available, std::optional<double> psi_full = std::nullopt) {
  return DomainReading{64 * kGiB, available, psi_full, std::nullopt};
}

TEST(Decide, KillBelowTheReserveWarnBelowTheWarnLineElseNothing) {
  GuardConfig config = Config();
  EXPECT_EQ(Decide(Reading(10 * kGiB), config).action, GuardAction::kNone);
  EXPECT_EQ(Decide(Reading(2 * kGiB), config).action, GuardAction::kNone) << "at the warn line is not below it";
  EXPECT_EQ(Decide(Reading(2 * kGiB - 1), config).action, GuardAction::kWarn);
  EXPECT_EQ(Decide(Reading(1 * kGiB), config).action, GuardAction::kWarn) << "at the reserve is not below it";
  GuardDecision kill = Decide(Reading(1 * kGiB - 1), config);
  EXPECT_EQ(kill.action, GuardAction::kKill);
  EXPECT_EQ(kill.kill_below_bytes, 1 * kGiB);
  EXPECT_EQ(kill.warn_below_bytes, 2 * kGiB);
  EXPECT_NE(kill.reason.find("below the reserve 1"), std::string::npos) << kill.reason;
  EXPECT_EQ(Decide(Reading(0), config).action, GuardAction::kKill);
}

TEST(Decide, DefaultLinesFollowTheDomainTotal) {
  GuardConfig config;  // no reserve set: max(1 GiB, 3%), at most an eighth
  GuardDecision big = Decide(DomainReading{288 * kGiB, 9 * kGiB, std::nullopt, std::nullopt}, config);
  EXPECT_EQ(big.kill_below_bytes, 288 * kGiB / 100 * 3);
  EXPECT_EQ(big.action, GuardAction::kWarn);
  GuardDecision small = Decide(DomainReading{1 * kGiB, 100 * kMiB, std::nullopt, std::nullopt}, config);
  EXPECT_EQ(small.kill_below_bytes, 128 * kMiB);
  EXPECT_EQ(small.action, GuardAction::kKill);
}

TEST(Decide, SustainedFullPressureWarnsButNeverKills) {
  GuardConfig config = Config();  // full 200 ms per 2 s: 10%
  EXPECT_EQ(Decide(Reading(10 * kGiB, 9.9), config).action, GuardAction::kNone);
  GuardDecision warn = Decide(Reading(10 * kGiB, 10.0), config);
  EXPECT_EQ(warn.action, GuardAction::kWarn);
  EXPECT_NE(warn.reason.find("pressure"), std::string::npos) << warn.reason;
  EXPECT_EQ(Decide(Reading(10 * kGiB, 100.0), config).action, GuardAction::kWarn);
  EXPECT_EQ(Decide(Reading(100 * kMiB, 100.0), config).action, GuardAction::kKill) << "memory decides the kill";
}

TEST(ChooseVictim, LargestManagedJobFirst) {
  std::vector<Candidate> jobs = {
      {"train-a", "/gpuctl/train-a", 100, 3 * kGiB},
      {"build-flash-attn", "/gpuctl/build-flash-attn", 200, 40 * kGiB},
      {"train-b", "/gpuctl/train-b", 300, 5 * kGiB},
  };
  std::vector<ProcessInfo> huge_unmanaged = {
      {.pid = 77, .comm = "java", .has_executable = true, .rss_bytes = 100 * kGiB, .oom_score = 1900}};
  GuardConfig config = Config();
  config.guard_unmanaged = true;
  auto victim = ChooseVictim(jobs, huge_unmanaged, config, kAgentPid);
  ASSERT_TRUE(victim.has_value());
  EXPECT_EQ(victim->kind, Victim::Kind::kManagedJob);
  EXPECT_EQ(victim->name, "build-flash-attn");
  EXPECT_EQ(victim->cgroup, "/gpuctl/build-flash-attn");
  EXPECT_EQ(victim->memory_bytes, 40 * kGiB);
}

TEST(ChooseVictim, TiesGoByNameAndEmptyJobsAreSkipped) {
  std::vector<Candidate> jobs = {{"b", "/b", 0, 2 * kGiB}, {"a", "/a", 0, 2 * kGiB}, {"c", "/c", 0, 0}};
  EXPECT_EQ(ChooseVictim(jobs, {}, Config(), kAgentPid)->name, "a");
  std::vector<Candidate> empty_only = {{"c", "/c", 0, 0}};
  EXPECT_FALSE(ChooseVictim(empty_only, {}, Config(), kAgentPid).has_value());
}

TEST(ChooseVictim, UnmanagedOnlyWhenEnabled) {
  std::vector<ProcessInfo> procs = {
      {.pid = 500, .comm = "cc1plus", .has_executable = true, .rss_bytes = 6 * kGiB, .oom_score = 900}};
  GuardConfig config = Config();
  EXPECT_FALSE(ChooseVictim({}, procs, config, kAgentPid).has_value());
  config.guard_unmanaged = true;
  auto victim = ChooseVictim({}, procs, config, kAgentPid);
  ASSERT_TRUE(victim.has_value());
  EXPECT_EQ(victim->kind, Victim::Kind::kUnmanagedProcess);
  EXPECT_EQ(victim->pid, 500);
  EXPECT_EQ(victim->name, "cc1plus");
}

// A host as the guard would scan it from /proc: every kind of process that
// must be spared, with the highest oom_scores, and two ordinary ones.
class ChooseVictimFromProc : public ::testing::Test {
 protected:
  void SetUp() override {
    WriteProcess(dir_, {.pid = 1, .comm = "systemd", .ppid = 0, .rss_kib = 12000, .oom_score = 1999});
    WriteProcess(dir_, {.pid = 2, .comm = "kthreadd", .ppid = 0, .flags = kKernelThreadFlags, .oom_score = 1998,
                        .exe = false});
    WriteProcess(dir_, {.pid = 9, .comm = "kswapd0", .ppid = 2, .flags = kKernelThreadFlags, .oom_score = 1997});
    WriteProcess(dir_, {.pid = 20, .comm = "oddthread", .ppid = 2, .oom_score = 1996, .exe = false});
    WriteProcess(dir_, {.pid = 600, .comm = "sshd", .rss_kib = 9000, .oom_score = 1995});
    WriteProcess(dir_, {.pid = 601, .comm = "sshd-session", .rss_kib = 9000, .oom_score = 1994});
    WriteProcess(dir_, {.pid = kAgentPid, .comm = "gpuctld", .rss_kib = 20000, .oom_score = 1993});
    WriteProcess(dir_, {.pid = 700, .comm = "postgres", .rss_kib = 8 << 20, .oom_score = 1992,
                        .oom_score_adj = -1000});
    WriteProcess(dir_, {.pid = 701, .comm = "defunct", .state = 'Z', .oom_score = 1991, .exe = false});
    WriteProcess(dir_, {.pid = 800, .comm = "cc1plus", .rss_kib = 3 << 20, .oom_score = 400});
    WriteProcess(dir_, {.pid = 801, .comm = "python3", .rss_kib = 5 << 20, .oom_score = 650});
    auto scanned = ScanProcesses(sys::HostFs(dir_.path()));
    ASSERT_TRUE(scanned.ok()) << scanned.status().ToString();
    procs_ = *scanned;
    config_.guard_unmanaged = true;
  }

  const ProcessInfo& Proc(int64_t pid) const {
    for (const ProcessInfo& p : procs_) {
      if (p.pid == pid) return p;
    }
    throw std::runtime_error("no pid " + std::to_string(pid));
  }

  TempDir dir_;
  std::vector<ProcessInfo> procs_;
  GuardConfig config_ = Config();
};

TEST_F(ChooseVictimFromProc, HighestOomScoreAmongTheKillable) {
  auto victim = ChooseVictim({}, procs_, config_, kAgentPid);
  ASSERT_TRUE(victim.has_value());
  EXPECT_EQ(victim->pid, 801);
  EXPECT_EQ(victim->memory_bytes, uint64_t{5} << 30);
}

TEST_F(ChooseVictimFromProc, SaysWhyEachSparedProcessIsSpared) {
  auto why = [&](int64_t pid) { return WhyProtected(Proc(pid), config_, kAgentPid).value_or("killable"); };
  EXPECT_EQ(why(1), "pid 1 (init)");
  EXPECT_EQ(why(2), "kernel thread kthreadd");
  EXPECT_EQ(why(9), "kernel thread kswapd0") << "PF_KTHREAD even with an exe link";
  EXPECT_EQ(why(20), "kernel thread oddthread") << "no exe link";
  EXPECT_EQ(why(600), "protected process sshd");
  EXPECT_EQ(why(601), "protected process sshd-session");
  EXPECT_EQ(why(kAgentPid), "the agent itself");
  EXPECT_EQ(why(700), "oom_score_adj -1000");
  EXPECT_EQ(why(701), "already exited");
  EXPECT_EQ(why(800), "killable");
  EXPECT_EQ(why(801), "killable");
}

TEST_F(ChooseVictimFromProc, NothingKillableMeansNoVictim) {
  std::erase_if(procs_, [](const ProcessInfo& p) { return p.pid == 800 || p.pid == 801; });
  EXPECT_FALSE(ChooseVictim({}, procs_, config_, kAgentPid).has_value());
}

TEST_F(ChooseVictimFromProc, ProtectedNamesAreConfigurable) {
  config_.protected_names = {"sshd", "sshd-session", "python3"};
  auto victim = ChooseVictim({}, procs_, config_, kAgentPid);
  ASSERT_TRUE(victim.has_value());
  EXPECT_EQ(victim->pid, 800);
  config_.protected_names = {};
  EXPECT_EQ(ChooseVictim({}, procs_, config_, kAgentPid)->pid, 600) << "sshd unprotected when told so";
}

TEST(ChooseVictim, TiesGoToLargerRssThenLowerPid) {
  GuardConfig config = Config();
  config.guard_unmanaged = true;
  std::vector<ProcessInfo> procs = {
      {.pid = 30, .comm = "a", .has_executable = true, .rss_bytes = 1 * kGiB, .oom_score = 500},
      {.pid = 20, .comm = "b", .has_executable = true, .rss_bytes = 2 * kGiB, .oom_score = 500},
      {.pid = 10, .comm = "c", .has_executable = true, .rss_bytes = 2 * kGiB, .oom_score = 500},
  };
  EXPECT_EQ(ChooseVictim({}, procs, config, kAgentPid)->pid, 10);
}

TEST(GuardActionName, Names) {
  EXPECT_STREQ(GuardActionName(GuardAction::kNone), "none");
  EXPECT_STREQ(GuardActionName(GuardAction::kWarn), "warn");
  EXPECT_STREQ(GuardActionName(GuardAction::kKill), "kill");
}

}  // namespace
}  // namespace gpuctl::guard
