#include "agents/build/build_watch.h"

#include <algorithm>
#include <csignal>
#include <filesystem>

#include <gtest/gtest.h>

#include "agents/sys/files.h"
#include "agents/sys/proc_stat.h"
#include "tests/fakes/fake_cgroup_driver.h"
#include "tests/fakes/fake_clock.h"
#include "tests/fakes/fake_process_control.h"
#include "tests/fakes/temp_dir.h"
#include "tests/unit/guard/proc_fixture.h"
#include "tests/fakes/skip_policy.h"
#include "common/units.h"

namespace gpuctl::build {
namespace {

using guard::testing::FixtureProcess;
using guard::testing::WriteProcess;

constexpr uint64_t kKiBPerGiB = uint64_t{1} << 20;
const std::string kCgroup = "/gpuctl/fa@r1";

class BuildWatchTest : public ::testing::Test {
 protected:
  explicit BuildWatchTest(sys::CgroupVersion version = sys::CgroupVersion::kV1) : cgroups_(version) {}

  void SetUp() override {
    if (sys::PageBytes() != 4096) GPUCTL_SKIP_ALLOWED(kPlatform) << "the /proc fixtures write RSS in 4 KiB pages";
    cgroups_.Put("/gpuctl", {});
    cgroups_.Put(kCgroup, {.max = 12 * kGiB});
    Spawn({.pid = 10, .comm = "ninja", .ppid = 1, .rss_kib = 8 << 10}, {"ninja", "-j3"});
  }

  // A process of the build, in its cgroup, with its command line.
  void Spawn(FixtureProcess process, const std::vector<std::string>& argv) {
    WriteProcess(proc_, process);
    std::string cmdline;
    for (const std::string& arg : argv) cmdline += arg + '\0';
    proc_.WriteFile("proc/" + std::to_string(process.pid) + "/cmdline", cmdline);
    auto cgroup = cgroups_.Get(kCgroup).value();
    cgroup.procs.push_back(process.pid);
    cgroups_.Put(kCgroup, cgroup);
  }
  void Exit(int64_t pid) {
    std::filesystem::remove_all(proc_.path() + "/proc/" + std::to_string(pid));
    cgroups_.Forget(pid);  // from the build's cgroup or its pause group
  }
  // nvcc -> cicc for one arch of `source`, cicc holding `gib`.
  void Compile(int64_t pid, const std::string& source, uint64_t gib, char state = 'S') {
    Spawn({.pid = pid, .comm = "nvcc", .ppid = 10, .state = state, .rss_kib = 4 << 10},
          {"/usr/local/cuda/bin/nvcc", "-gencode", "arch=compute_80,code=sm_80", "-c", source, "-o", source + ".o"});
    Spawn({.pid = pid + 1, .comm = "cicc", .ppid = pid, .state = state, .rss_kib = gib * kKiBPerGiB}, {"cicc"});
  }

  std::unique_ptr<BuildWatch> MakeWatch() {
    BuildWatchHooks hooks;
    hooks.builds = [this] { return builds_; };
    hooks.fail = [this](const BuildJob& job, const std::string& why) { failures_.push_back(job.name + ": " + why); };
    hooks.publish = [this](const BuildJob&, const std::string& kind, const std::string&, nlohmann::json) {
      events_.push_back(kind);
    };
    hooks.domain_room = [this] { return domain_room_; };
    hooks.outcome = [this](const BuildJob&) { return outcome_; };
    BuildWatchOptions options;
    options.history_path = state_.path() + "/build-peaks.json";
    options.headroom_bytes = kGiB;
    return std::make_unique<BuildWatch>(options, hooks, cgroups_, processes_, fs_, clock_);
  }

  // a.cu holding `a_gib`, b.cu and c.cu just started, one tick: b and c
  // do not fit beside a's predicted peak, and are paused.
  std::unique_ptr<BuildWatch> ThreeCompilesAfterOneTick(uint64_t a_gib) {
    Compile(20, "a.cu", a_gib);
    Compile(30, "b.cu", 0);
    Compile(40, "c.cu", 0);
    auto watch = MakeWatch();
    watch->Tick();
    return watch;
  }

  // The same, then a.cu ends: one compile done, b and c still governed.
  std::unique_ptr<BuildWatch> OneOfThreeCompilesDone() {
    auto watch = ThreeCompilesAfterOneTick(1);
    Exit(20);
    Exit(21);
    watch->Tick();
    return watch;
  }

  std::vector<int64_t> Signalled(int sig) {
    std::vector<int64_t> pids;
    for (const auto& sent : processes_.signals()) {
      if (sent.sig == sig && !sent.group) pids.push_back(sent.target);
    }
    return pids;
  }

  testing::TempDir proc_;
  testing::TempDir state_;
  sys::HostFs fs_{proc_.path()};
  testing::FakeCgroupDriver cgroups_;
  testing::FakeProcessControl processes_;
  testing::FakeClock clock_;
  std::vector<BuildJob> builds_{{"fa", "r1", kCgroup, "/src", 12 * kGiB}};
  std::vector<std::string> failures_;
  std::vector<std::string> events_;
  std::optional<uint64_t> domain_room_;  // the guard's domain: nullopt, as big as the budget
  BuildOutcome outcome_ = BuildOutcome::kSucceeded;
  std::string History() const {
    auto saved = sys::ReadWholeFile(state_.path() + "/build-peaks.json");
    return saved.ok() ? *saved : "";
  }
};

// Other work in the guard's domain grew after the build's budget was set:
// the governor sees the room the domain has now, and pauses what would reach
// the guard's line, though the budget alone would let it run.
TEST_F(BuildWatchTest, TheGuardsDomainShrinkingPausesWhatTheBudgetAloneWouldLetRun) {
  Compile(20, "a.cu", 1);
  Compile(30, "b.cu", 0);
  builds_[0].budget_bytes = 20 * kGiB;  // room for both predicted peaks (6.5 GiB each)
  cgroups_.Put(kCgroup, [&] {
    auto cgroup = cgroups_.Get(kCgroup).value();
    cgroup.max = 20 * kGiB;
    return cgroup;
  }());
  auto watch = MakeWatch();
  watch->Tick();
  EXPECT_TRUE(Signalled(SIGSTOP).empty()) << "the budget holds both";
  domain_room_ = 7 * kGiB;  // the domain has room for one more peak only
  watch->Tick();
  EXPECT_EQ(Signalled(SIGSTOP), (std::vector<int64_t>{30, 31}));
  EXPECT_EQ(watch->Stats("r1")->paused, 1u);
  domain_room_ = 30 * kGiB;  // it grew back
  watch->Tick();
  EXPECT_EQ(Signalled(SIGCONT), (std::vector<int64_t>{30, 31}));
}

// The guard, about to kill a governed build, asks for relief: all but the
// oldest running compile are paused at once; the governor adopts them as
// paused and resumes them as they fit. Nothing to pause: no relief.
TEST_F(BuildWatchTest, ReliefPausesAllButTheOldestCompile) {
  Compile(20, "a.cu", 1);
  Compile(30, "b.cu", 0);
  Compile(40, "c.cu", 0);
  builds_[0].budget_bytes = 40 * kGiB;
  auto watch = MakeWatch();
  watch->Tick();
  ASSERT_EQ(watch->Stats("r1")->running, 3u);
  EXPECT_FALSE(watch->Relieve("no-such-run"));
  ASSERT_TRUE(watch->Relieve("r1"));
  watch->Tick();
  EXPECT_EQ(Signalled(SIGSTOP), (std::vector<int64_t>{30, 31, 40, 41}));
  EXPECT_EQ(events_.back(), "build_throttled");
  // The stopped trees read as stopped now: the governor takes them as
  // paused, and resumes them since they fit.
  for (int64_t pid : {30, 31, 40, 41}) {
    std::filesystem::remove_all(proc_.path() + "/proc/" + std::to_string(pid));
    WriteProcess(proc_, {.pid = pid, .comm = pid % 10 == 0 ? "nvcc" : "cicc", .ppid = pid % 10 == 0 ? 10 : pid - 1,
                         .state = 'T', .rss_kib = 4 << 10});
  }
  watch->Tick();
  EXPECT_EQ(Signalled(SIGCONT), (std::vector<int64_t>{30, 31, 40, 41}));
  EXPECT_TRUE(failures_.empty());
}

TEST_F(BuildWatchTest, PausesWholeTreesThatWouldNotFitAndResumesThemAsCompilesEnd) {
  auto watch = ThreeCompilesAfterOneTick(1);
  // 11 GiB to plan with holds one 6.5 GiB compile and the 1 GiB a holds.
  EXPECT_EQ(Signalled(SIGSTOP), (std::vector<int64_t>{30, 31, 40, 41}));
  EXPECT_TRUE(Signalled(SIGCONT).empty());
  std::optional<BuildStats> stats = watch->Stats("r1");
  ASSERT_TRUE(stats);
  EXPECT_EQ(stats->running, 1u);
  EXPECT_EQ(stats->paused, 2u);
  EXPECT_EQ(stats->budget_bytes, 12 * kGiB);
  EXPECT_EQ(events_, std::vector<std::string>{"build_throttled"});

  Exit(20);
  Exit(21);
  watch->Tick();
  EXPECT_EQ(Signalled(SIGCONT), (std::vector<int64_t>{30, 31}));
  stats = watch->Stats("r1");
  EXPECT_EQ(stats->compiles_done, 1u);
  EXPECT_EQ(stats->running, 1u);
  EXPECT_EQ(stats->paused, 1u);
  EXPECT_TRUE(failures_.empty());

  // The build ends: what is still paused is resumed, the figures stay.
  builds_.clear();
  watch->Tick();
  EXPECT_EQ(Signalled(SIGCONT), (std::vector<int64_t>{30, 31, 40, 41}));
  EXPECT_EQ(events_.back(), "build_summary");
  ASSERT_TRUE(watch->Stats("r1"));
  EXPECT_EQ(watch->Stats("r1")->running, 0u);

  // a.cu's peak is kept for the next build, keyed by its absolute path.
  watch->Stop();
  auto saved = sys::ReadWholeFile(state_.path() + "/build-peaks.json");
  ASSERT_TRUE(saved.ok());
  EXPECT_NE(saved->find("/src/a.cu (nvcc, 1 archs, 1 threads)"), std::string::npos) << *saved;
}

TEST_F(BuildWatchTest, StoppingTheWatchResumesWhatItPaused) {
  Compile(20, "a.cu", 1);
  Compile(30, "b.cu", 0);
  auto watch = MakeWatch();
  watch->Tick();
  ASSERT_EQ(Signalled(SIGSTOP), (std::vector<int64_t>{30, 31}));
  watch->Stop();
  EXPECT_EQ(Signalled(SIGCONT), (std::vector<int64_t>{30, 31}));
}

TEST_F(BuildWatchTest, TreesAnEarlierAgentLeftStoppedAreResumedWhenTheyFit) {
  Compile(20, "a.cu", 1, 'T');
  auto watch = MakeWatch();
  watch->Tick();
  EXPECT_EQ(Signalled(SIGCONT), (std::vector<int64_t>{20, 21}));
}

TEST_F(BuildWatchTest, ACompileThatCannotFitAloneFailsTheBuildWithTheFigures) {
  Compile(20, "huge.cu", 11);
  // The cgroup charges more than the processes' RSS (page tables, tmpfs):
  // 11.6 GiB of the 12, with nothing left to pause.
  auto cgroup = cgroups_.Get(kCgroup).value();
  cgroup.current = 11 * kGiB + 600 * (kGiB >> 10);
  cgroups_.Put(kCgroup, cgroup);
  auto watch = MakeWatch();
  watch->Tick();
  ASSERT_EQ(failures_.size(), 1u);
  EXPECT_NE(failures_[0].find("fa: the compile nvcc /src/huge.cu cannot fit"), std::string::npos) << failures_[0];
  EXPECT_EQ(events_, std::vector<std::string>{"build_failed"});
  EXPECT_FALSE(watch->Stats("r1")->failure.empty());
  watch->Tick();
  EXPECT_EQ(failures_.size(), 1u) << "failed once";
}

TEST_F(BuildWatchTest, BuildsWithoutACgroupAreLeftAlone) {
  Compile(20, "a.cu", 1);
  Compile(30, "b.cu", 0);
  builds_[0].cgroup.clear();
  auto watch = MakeWatch();
  watch->Tick();
  EXPECT_TRUE(processes_.signals().empty());
  EXPECT_FALSE(watch->Stats("r1"));
}

TEST_F(BuildWatchTest, TheThreadGovernsUntilStopped) {
  Compile(20, "a.cu", 1);
  Compile(30, "b.cu", 0);
  auto watch = MakeWatch();
  watch->Start();
  for (int i = 0; i < 2000 && Signalled(SIGSTOP).empty(); ++i) std::this_thread::sleep_for(std::chrono::milliseconds(1));
  watch->Stop();
  EXPECT_FALSE(Signalled(SIGSTOP).empty());
  EXPECT_FALSE(Signalled(SIGCONT).empty());
}

TEST_F(BuildWatchTest, ACompileWhoseCiccEndedLetsTheNextOneRun) {
  auto watch = ThreeCompilesAfterOneTick(3);
  ASSERT_EQ(Signalled(SIGSTOP), (std::vector<int64_t>{30, 31, 40, 41}));
  // a's cicc (21) ended; its ptxas (22) holds 1 GiB.
  Exit(21);
  Spawn({.pid = 22, .comm = "ptxas", .ppid = 20, .rss_kib = 1 * kKiBPerGiB}, {"ptxas"});
  watch->Tick();
  EXPECT_EQ(Signalled(SIGCONT), (std::vector<int64_t>{30, 31}));
}

TEST_F(BuildWatchTest, AStoppedTreeThatStaysPausedIsResumedWhenTheWatchStops) {
  Compile(20, "a.cu", 1);
  Compile(30, "b.cu", 0, 'T');  // left stopped by an agent killed with -9
  auto watch = MakeWatch();
  watch->Tick();
  EXPECT_TRUE(Signalled(SIGCONT).empty()) << "b does not fit beside a";
  EXPECT_EQ(watch->Stats("r1")->paused, 1u);
  watch->Stop();
  EXPECT_EQ(Signalled(SIGCONT), (std::vector<int64_t>{30, 31}));
}

TEST_F(BuildWatchTest, AFailedReadOfTheCgroupForgetsNothing) {
  auto watch = ThreeCompilesAfterOneTick(1);
  cgroups_.FailOn(testing::FakeCgroupDriver::Op::kProcesses, IoError("cgroup.procs: EIO"));
  watch->Tick();
  cgroups_.ClearFailures();
  watch->Tick();
  // Had the failed read meant "every compile ended", all three would count as
  // done and b and c, new again, would be paused a second time.
  EXPECT_EQ(watch->Stats("r1")->compiles_done, 0u);
  EXPECT_EQ(watch->Stats("r1")->pauses, 2u);
}

// A stopped build: the compiles still running are stopped, not done, and
// nothing it ran teaches the history (a.cu ended before the stop, but the
// next build of these sources must not be planned from a cut-short run).
TEST_F(BuildWatchTest, AStoppedBuildTeachesNothingAndCountsWhatStillRanAsStopped) {
  auto watch = OneOfThreeCompilesDone();
  ASSERT_EQ(watch->Stats("r1")->compiles_done, 1u);
  outcome_ = BuildOutcome::kStopping;
  builds_.clear();  // GovernableBuilds lets go of a build being stopped
  watch->Tick();
  EXPECT_EQ(Signalled(SIGCONT), (std::vector<int64_t>{30, 31, 40, 41})) << "what it paused takes the stop's SIGTERM";
  EXPECT_EQ(watch->Stats("r1")->compiles_done, 1u);
  EXPECT_EQ(watch->Stats("r1")->compiles_stopped, 2u);
  watch->Stop();
  EXPECT_EQ(History().find("a.cu"), std::string::npos) << History();
}

TEST_F(BuildWatchTest, AFailedBuildTeachesNothing) {
  auto watch = OneOfThreeCompilesDone();
  outcome_ = BuildOutcome::kFailed;
  builds_.clear();
  watch->Tick();
  EXPECT_EQ(watch->Stats("r1")->compiles_stopped, 0u);
  watch->Stop();
  EXPECT_EQ(History().find("a.cu"), std::string::npos) << History();
}

// Out of the running list before its record says how it ended: asked again
// at the next tick, and learned from once it says succeeded.
TEST_F(BuildWatchTest, ABuildIsLearnedFromOnceItsRecordSaysItSucceeded) {
  auto watch = OneOfThreeCompilesDone();
  outcome_ = BuildOutcome::kRunning;
  builds_.clear();
  watch->Tick();
  EXPECT_TRUE(std::find(events_.begin(), events_.end(), "build_summary") == events_.end()) << "not ended yet";
  outcome_ = BuildOutcome::kSucceeded;
  watch->Tick();
  EXPECT_EQ(events_.back(), "build_summary");
  watch->Stop();
  EXPECT_NE(History().find("/src/a.cu (nvcc, 1 archs, 1 threads)"), std::string::npos) << History();
}

// On cgroup v2 a pause freezes: the tree moves into a pause group of its own
// below the build's cgroup (compile-PID-START) and the group is frozen, so a
// child forked at that moment stops too and no SIGCONT wakes it. No signal
// is sent. tests/privileged/cgroup_v2_freezer_test.cc freezes for real.
class BuildWatchFreezerTest : public BuildWatchTest {
 protected:
  BuildWatchFreezerTest() : BuildWatchTest(sys::CgroupVersion::kV2) {}

  // The pause group of the compile whose nvcc is `pid` (started at 4242, proc_fixture.h).
  static std::string GroupOf(int64_t pid) { return kCgroup + "/compile-" + std::to_string(pid) + "-4242"; }
  std::vector<int64_t> ProcsOf(const std::string& group) {
    std::vector<int64_t> procs = cgroups_.Get(group).value_or(testing::FakeCgroupDriver::Cgroup{}).procs;
    std::sort(procs.begin(), procs.end());
    return procs;
  }
  bool FrozenGroup(int64_t pid) {
    return cgroups_.Get(GroupOf(pid)).value_or(testing::FakeCgroupDriver::Cgroup{}).frozen;
  }
  std::vector<std::string> Groups() { return cgroups_.Children(kCgroup).value_or(std::vector<std::string>{}); }
};

TEST_F(BuildWatchFreezerTest, PausesAWholeTreeByFreezingItsOwnGroupAndThawsItWhenItFits) {
  auto watch = ThreeCompilesAfterOneTick(1);
  EXPECT_TRUE(Signalled(SIGSTOP).empty()) << "frozen, not stopped";
  EXPECT_EQ(Groups(), (std::vector<std::string>{GroupOf(30), GroupOf(40)}));
  EXPECT_EQ(ProcsOf(GroupOf(30)), (std::vector<int64_t>{30, 31}));
  EXPECT_EQ(ProcsOf(GroupOf(40)), (std::vector<int64_t>{40, 41}));
  EXPECT_TRUE(FrozenGroup(30));
  EXPECT_TRUE(FrozenGroup(40));
  EXPECT_EQ(watch->Stats("r1")->paused, 2u);
  EXPECT_EQ(cgroups_.Processes(kCgroup).value().size(), 7u) << "still all the build's: ninja and three trees";

  watch->Tick();
  EXPECT_EQ(watch->Stats("r1")->paused, 2u) << "frozen trees read as paused";
  EXPECT_EQ(watch->Stats("r1")->pauses, 2u) << "and are not paused again";

  // a ends: b fits and is thawed, staying in its group; c stays frozen.
  Exit(20);
  Exit(21);
  watch->Tick();
  EXPECT_FALSE(FrozenGroup(30));
  EXPECT_EQ(ProcsOf(GroupOf(30)), (std::vector<int64_t>{30, 31}));
  EXPECT_TRUE(FrozenGroup(40));
  EXPECT_EQ(watch->Stats("r1")->running, 1u);

  // b ends: its empty group goes, c is thawed.
  Exit(30);
  Exit(31);
  watch->Tick();
  EXPECT_EQ(Groups(), std::vector<std::string>{GroupOf(40)});
  EXPECT_FALSE(FrozenGroup(40));
  EXPECT_TRUE(Signalled(SIGSTOP).empty());
  EXPECT_TRUE(failures_.empty());
}

// A child the paused compile forked as it was moved landed in the build's
// cgroup: the next tick moves it into the frozen group too.
TEST_F(BuildWatchFreezerTest, AChildForkedOutsideTheGroupIsFrozenWithItsTree) {
  Compile(20, "a.cu", 1);
  Compile(30, "b.cu", 0);
  auto watch = MakeWatch();
  watch->Tick();
  ASSERT_EQ(ProcsOf(GroupOf(30)), (std::vector<int64_t>{30, 31}));
  Spawn({.pid = 32, .comm = "ptxas", .ppid = 30, .rss_kib = 4 << 10}, {"ptxas"});
  watch->Tick();
  EXPECT_EQ(ProcsOf(GroupOf(30)), (std::vector<int64_t>{30, 31, 32}));
  EXPECT_TRUE(FrozenGroup(30));
  EXPECT_TRUE(Signalled(SIGSTOP).empty());
}

TEST_F(BuildWatchFreezerTest, StoppingTheWatchThawsWhatItFroze) {
  Compile(20, "a.cu", 1);
  Compile(30, "b.cu", 0);
  auto watch = MakeWatch();
  watch->Tick();
  ASSERT_TRUE(FrozenGroup(30));
  watch->Stop();
  EXPECT_FALSE(FrozenGroup(30));
}

// An agent killed with -9 left b frozen in its group: the next agent adopts
// it as paused (it does not fit beside a), and thaws it once it fits.
TEST_F(BuildWatchFreezerTest, ATreeAnEarlierAgentLeftFrozenIsAdoptedAndThawedWhenItFits) {
  Compile(20, "a.cu", 1);
  Compile(30, "b.cu", 0);
  ASSERT_TRUE(cgroups_.CreateSubgroup(GroupOf(30)).ok());
  ASSERT_TRUE(cgroups_.AddProcess(GroupOf(30), 30).ok());
  ASSERT_TRUE(cgroups_.AddProcess(GroupOf(30), 31).ok());
  ASSERT_TRUE(cgroups_.SetFrozen(GroupOf(30), true).ok());
  auto watch = MakeWatch();
  watch->Tick();
  EXPECT_TRUE(FrozenGroup(30)) << "b does not fit beside a";
  EXPECT_EQ(watch->Stats("r1")->paused, 1u);
  Exit(20);
  Exit(21);
  watch->Tick();
  EXPECT_FALSE(FrozenGroup(30));
}

// A kernel without cgroup.freeze (before 5.2), or a group the agent may not
// write: the run pauses with SIGSTOP, as on v1.
TEST_F(BuildWatchFreezerTest, WhereTheFreezerFailsTreesAreStoppedWithSignals) {
  cgroups_.FailOn(testing::FakeCgroupDriver::Op::kSetFrozen, FailedPrecondition("no cgroup.freeze"));
  auto watch = ThreeCompilesAfterOneTick(1);
  EXPECT_EQ(Signalled(SIGSTOP), (std::vector<int64_t>{30, 31, 40, 41}));
  cgroups_.ClearFailures();
  Exit(20);
  Exit(21);
  watch->Tick();
  EXPECT_EQ(Signalled(SIGCONT), (std::vector<int64_t>{30, 31}));
}

}  // namespace
}  // namespace gpuctl::build
