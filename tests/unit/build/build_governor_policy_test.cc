#include "agents/build/build_governor_policy.h"
#include "common/units.h"

#include <gtest/gtest.h>

namespace gpuctl::build {
namespace {


TreeSample Nvcc(std::string id, uint64_t rss, uint32_t archs = 1, uint32_t threads = 1, std::string source = "") {
  return {.id = std::move(id), .program = "nvcc", .source = std::move(source), .archs = archs, .threads = threads,
          .rss_bytes = rss};
}

GovernorConfig Budget(uint64_t budget, uint64_t headroom = kGiB) {
  return {.budget_bytes = budget, .headroom_bytes = headroom};
}

TEST(BuildGovernor, PredictsNvccFromThePerArchModel) {
  BuildGovernor governor(Budget(200 * kGiB));
  governor.Tick({Nvcc("one", kMiB), Nvcc("two-t2", kMiB, 2, 2), Nvcc("five-t4", kMiB, 5, 4), Nvcc("two-t8", kMiB, 2, 8)},
                0);
  EXPECT_EQ(governor.PredictedPeak("one"), kNvccPeakOneArchBytes);
  EXPECT_EQ(governor.PredictedPeak("two-t2"), 2 * kNvccPeakOneArchBytes);
  EXPECT_EQ(governor.PredictedPeak("five-t4"), 4 * kNvccPeakOneArchBytes);
  EXPECT_EQ(governor.PredictedPeak("two-t8"), 2 * kNvccPeakOneArchBytes);
}

TEST(BuildGovernor, PausesTheYoungestWhenPredictedPeaksWouldNotFit) {
  // 20 GiB less 1 GiB headroom holds two 6.5 GiB compiles, not three.
  BuildGovernor governor(Budget(20 * kGiB));
  GovernorDecision first = governor.Tick({Nvcc("a", 100 * kMiB), Nvcc("b", 100 * kMiB), Nvcc("c", 100 * kMiB)}, 0);
  EXPECT_EQ(first.pause, std::vector<std::string>{"c"});
  EXPECT_TRUE(first.resume.empty());
  EXPECT_EQ(first.running, 2u);
  EXPECT_EQ(first.paused, 1u);
  EXPECT_FALSE(first.fail);
  // Still no room: nothing changes, nothing is signalled twice.
  GovernorDecision again = governor.Tick({Nvcc("a", 3 * kGiB), Nvcc("b", 2 * kGiB), Nvcc("c", 100 * kMiB)}, 0);
  EXPECT_TRUE(again.pause.empty());
  EXPECT_TRUE(again.resume.empty());
  // a ended: c resumes.
  GovernorDecision after = governor.Tick({Nvcc("b", 2 * kGiB), Nvcc("c", 100 * kMiB)}, 0);
  EXPECT_EQ(after.resume, std::vector<std::string>{"c"});
  EXPECT_EQ(governor.pauses(), 1u);
}

TEST(BuildGovernor, NeverStopsTheOldestEvenWhenNothingFits) {
  BuildGovernor governor(Budget(4 * kGiB));
  GovernorDecision decision = governor.Tick({Nvcc("old", 100 * kMiB), Nvcc("young", 100 * kMiB)}, 0);
  EXPECT_EQ(decision.running, 1u);
  EXPECT_EQ(decision.pause, std::vector<std::string>{"young"});
  EXPECT_FALSE(decision.fail) << "a prediction alone never fails a build";
}

TEST(BuildGovernor, ACompilePastItsPeakReservesOnlyItsTail) {
  BuildGovernor governor(Budget(12 * kGiB));  // 11 GiB to plan with: two peaks do not fit
  EXPECT_EQ(governor.Tick({Nvcc("a", 100 * kMiB), Nvcc("b", 100 * kMiB)}, 0).pause, std::vector<std::string>{"b"});
  EXPECT_EQ(governor.Tick({Nvcc("a", 6 * kGiB), Nvcc("b", 100 * kMiB)}, 0).paused, 1u);
  // a's cicc ended: 1.5 GiB of ptxas left, so b's 6.5 GiB peak fits beside it.
  GovernorDecision decision = governor.Tick({Nvcc("a", 1536 * kMiB), Nvcc("b", 100 * kMiB)}, 0);
  EXPECT_EQ(decision.resume, std::vector<std::string>{"b"});
}

TEST(BuildGovernor, ACompileWithMoreArchsThanThreadsPeaksOncePerWave) {
  // 2 archs on 1 thread: two cicc peaks, one after the other.
  BuildGovernor governor(Budget(12 * kGiB));
  governor.Tick({Nvcc("a", 100 * kMiB, 2, 1), Nvcc("b", 100 * kMiB)}, 0);
  governor.Tick({Nvcc("a", 6 * kGiB, 2, 1), Nvcc("b", 100 * kMiB)}, 0);
  // After the first wave the second is still to come: b stays paused.
  GovernorDecision between = governor.Tick({Nvcc("a", 1536 * kMiB, 2, 1), Nvcc("b", 100 * kMiB)}, 0);
  EXPECT_TRUE(between.resume.empty());
  governor.Tick({Nvcc("a", 6 * kGiB, 2, 1), Nvcc("b", 100 * kMiB)}, 0);
  GovernorDecision after = governor.Tick({Nvcc("a", 1536 * kMiB, 2, 1), Nvcc("b", 100 * kMiB)}, 0);
  EXPECT_EQ(after.resume, std::vector<std::string>{"b"});
}

TEST(BuildGovernor, UnknownCompilersLearnFromTheirFinishedPeers) {
  // ptxas has no model: twice what it shows, at least 1 GiB, until a peer ends.
  BuildGovernor governor(Budget(4 * kGiB, 512 * kMiB));
  auto ptxas = [](std::string id, uint64_t rss) { return TreeSample{.id = std::move(id), .program = "ptxas", .source = "", .rss_bytes = rss}; };
  GovernorDecision first = governor.Tick({ptxas("p1", 300 * kMiB), ptxas("p2", 10 * kMiB), ptxas("p3", 10 * kMiB),
                                          ptxas("p4", 10 * kMiB), ptxas("p5", 10 * kMiB)},
                                         0);
  EXPECT_EQ(governor.PredictedPeak("p2"), kGiB);
  EXPECT_EQ(first.running, 3u);
  // p1 ended at 300 MiB: its peers are now expected at 345 MiB, and all run.
  GovernorDecision learned = governor.Tick(
      {ptxas("p2", 10 * kMiB), ptxas("p3", 10 * kMiB), ptxas("p4", 10 * kMiB), ptxas("p5", 10 * kMiB)}, 0);
  EXPECT_EQ(governor.PredictedPeak("p2"), 345 * kMiB);
  EXPECT_EQ(learned.running, 4u);
  EXPECT_EQ(learned.resume.size(), 2u);
  std::vector<FinishedCompile> finished = governor.TakeFinished();
  ASSERT_EQ(finished.size(), 1u);
  EXPECT_EQ(finished[0].peak_bytes, 300 * kMiB);
  EXPECT_TRUE(governor.TakeFinished().empty());
}

TEST(BuildGovernor, NvccLearnsFromTwoPeersAndNeverAboveTheModel) {
  BuildGovernor governor(Budget(100 * kGiB));
  governor.Tick({Nvcc("a", 4 * kGiB), Nvcc("b", 3 * kGiB), Nvcc("c", kMiB)}, 0);
  governor.Tick({Nvcc("b", 3 * kGiB), Nvcc("c", kMiB)}, 0);
  EXPECT_EQ(governor.PredictedPeak("c"), kNvccPeakOneArchBytes) << "one peer is not enough";
  governor.Tick({Nvcc("c", kMiB)}, 0);
  EXPECT_EQ(governor.PredictedPeak("c"), static_cast<uint64_t>(4.6 * static_cast<double>(kGiB)));
}

TEST(BuildGovernor, APerSourceHistoryPredictsARebuild) {
  TreeSample sample = Nvcc("x", kMiB, 1, 1, "/src/flash_fwd.cu");
  BuildGovernor governor(Budget(100 * kGiB), {{HistoryKey(sample), 4 * kGiB}});
  governor.Tick({sample}, 0);
  EXPECT_EQ(governor.PredictedPeak("x"), static_cast<uint64_t>(4.4 * static_cast<double>(kGiB)));
  // The same file for two archs is another compile.
  EXPECT_NE(HistoryKey(sample), HistoryKey(Nvcc("y", kMiB, 2, 2, "/src/flash_fwd.cu")));
  EXPECT_EQ(HistoryKey(Nvcc("z", kMiB)), "");
}

TEST(BuildGovernor, MemoryOutsideTheTreesCountsAgainstTheBudget) {
  BuildGovernor governor(Budget(20 * kGiB));
  GovernorDecision decision = governor.Tick({Nvcc("a", kMiB), Nvcc("b", kMiB)}, 8 * kGiB);
  EXPECT_EQ(decision.running, 1u);
}

TEST(BuildGovernor, FailsWhenTheLoneRunningCompileReachesTheBudget) {
  BuildGovernor governor(Budget(8 * kGiB));
  governor.Tick({Nvcc("big", kGiB, 1, 1, "/src/huge.cu"), Nvcc("small", 200 * kMiB)}, 0);
  GovernorDecision decision = governor.Tick({Nvcc("big", 7800 * kMiB, 1, 1, "/src/huge.cu"), Nvcc("small", 200 * kMiB)}, 0);
  ASSERT_TRUE(decision.fail);
  EXPECT_NE(decision.fail->find("/src/huge.cu"), std::string::npos) << *decision.fail;
  EXPECT_NE(decision.fail->find("7.6 GiB"), std::string::npos) << *decision.fail;
  EXPECT_NE(decision.fail->find("the budget is 8.0 GiB"), std::string::npos) << *decision.fail;
}

TEST(BuildGovernor, FailsAtOnceWhenAnEarlierBuildOfTheFilePeakedAboveTheBudget) {
  TreeSample sample = Nvcc("x", kMiB, 1, 1, "/src/huge.cu");
  BuildGovernor governor(Budget(8 * kGiB), {{HistoryKey(sample), 9 * kGiB}});
  GovernorDecision decision = governor.Tick({sample}, 0);
  ASSERT_TRUE(decision.fail);
  EXPECT_NE(decision.fail->find("needed 9.0 GiB in an earlier build"), std::string::npos) << *decision.fail;
}

TEST(BuildGovernor, TreesFoundStoppedAreAdoptedAsPausedAndResumedWhenTheyFit) {
  BuildGovernor governor(Budget(20 * kGiB));
  TreeSample stopped = Nvcc("s", 2 * kGiB);
  stopped.stopped = true;
  GovernorDecision decision = governor.Tick({stopped}, 0);
  EXPECT_EQ(decision.resume, std::vector<std::string>{"s"});
}

TEST(BuildGovernor, AnEndedCiccEndsTheWaveEvenBelowThePrediction) {
  // A light kernel peaks at 3 GiB, under half the 6.5 GiB model: its curve
  // alone never shows a wave; its processes do.
  BuildGovernor governor(Budget(10 * kGiB));
  auto nvcc = [](std::string id, uint64_t rss, uint32_t ciccs_done) {
    TreeSample sample = Nvcc(std::move(id), rss);
    sample.device_compiles_done = ciccs_done;
    return sample;
  };
  EXPECT_EQ(governor.Tick({nvcc("a", 3 * kGiB, 0), nvcc("b", 10 * kMiB, 0)}, 0).pause, std::vector<std::string>{"b"});
  // cicc still running at 3 GiB (it may yet reach the model's 6.5 GiB).
  EXPECT_TRUE(governor.Tick({nvcc("a", 3 * kGiB, 0), nvcc("b", 10 * kMiB, 0)}, 0).resume.empty());
  // Its cicc ended: ptxas and the host compile hold 1 GiB, b fits beside it.
  EXPECT_EQ(governor.Tick({nvcc("a", kGiB, 1), nvcc("b", 10 * kMiB, 0)}, 0).resume, std::vector<std::string>{"b"});
}

TEST(BuildGovernor, WavesCountTheirArchsDeviceCompiles) {
  // 5 archs on 4 threads: the first wave is 4 cicc runs, the second one.
  BuildGovernor governor(Budget(100 * kGiB));
  TreeSample five = Nvcc("five", kGiB, 5, 4);
  for (uint32_t done : {0u, 3u}) {
    five.device_compiles_done = done;
    governor.Tick({five}, 0);
    EXPECT_EQ(governor.Tick({five}, 0).planned_bytes, 4 * kNvccPeakOneArchBytes) << done;
  }
  five.device_compiles_done = 4;
  five.rss_bytes = 2 * kGiB;
  // Past the first wave: its tail (2.5 GiB) and one more arch's peak.
  EXPECT_EQ(governor.Tick({five}, 0).planned_bytes, 2 * kGiB + kGiB / 2 + kNvccPeakOneArchBytes);
  five.device_compiles_done = 5;
  EXPECT_EQ(governor.Tick({five}, 0).planned_bytes, 2 * kGiB + kGiB / 2);
}

TEST(BuildGovernor, ATailsBumpIsNotTheLastArchsWave) {
  // 5 archs on 4 threads, seen by its memory alone: four archs peak, then
  // their four tails bump higher than 40% of one arch's peak. The fifth
  // arch's peak is still to come and stays reserved.
  BuildGovernor governor(Budget(200 * kGiB));
  for (uint64_t rss : {10 * kGiB, 20 * kGiB, 3 * kGiB, 7 * kGiB, 3 * kGiB}) {
    governor.Tick({Nvcc("five", rss, 5, 4)}, 0);
  }
  EXPECT_GE(governor.Tick({Nvcc("five", 3 * kGiB, 5, 4)}, 0).planned_bytes, 3 * kGiB + kNvccPeakOneArchBytes);
}

TEST(BuildGovernor, NvccWithoutAnArchOnItsLineIsOneArch) {
  // nvcc's default arch, or -arch=native: one arch, not an unknown compiler.
  BuildGovernor governor(Budget(100 * kGiB));
  governor.Tick({Nvcc("plain", kMiB, 0, 1)}, 0);
  EXPECT_EQ(governor.PredictedPeak("plain"), kNvccPeakOneArchBytes);
}

TEST(DefaultHeadroom, IsFivePercentWithinOneAndEightGiBButAtMostAQuarter) {
  EXPECT_EQ(DefaultHeadroom(20 * kGiB), kGiB);
  EXPECT_EQ(DefaultHeadroom(100 * kGiB), 5 * kGiB);
  EXPECT_EQ(DefaultHeadroom(400 * kGiB), 8 * kGiB);
  EXPECT_EQ(DefaultHeadroom(256 * kMiB), 64 * kMiB);
}

TEST(BuildGovernor, ATinyBudgetStillRunsItsOldestCompile) {
  BuildGovernor governor({.budget_bytes = 256 * kMiB, .headroom_bytes = DefaultHeadroom(256 * kMiB)});
  TreeSample cc{.id = "cc", .program = "cc1plus", .source = "", .rss_bytes = 20 * kMiB};
  GovernorDecision decision = governor.Tick({cc}, 0);
  EXPECT_EQ(decision.running, 1u);
  EXPECT_FALSE(decision.fail);
}

TEST(BuildGovernor, ARebuildStartsItsLongestCompileFirst) {
  // Room for one: the file that ran longest last time goes first, though
  // ninja started it last.
  TreeSample quick = Nvcc("quick", kMiB, 1, 1, "/src/quick.cu");
  TreeSample slow = Nvcc("slow", kMiB, 1, 1, "/src/slow.cu");
  BuildGovernor governor(Budget(8 * kGiB), {}, {{HistoryKey(quick), 10.0}, {HistoryKey(slow), 100.0}});
  GovernorDecision decision = governor.Tick({quick, slow}, 0);
  EXPECT_EQ(decision.pause, std::vector<std::string>{"quick"});
}

TEST(BuildGovernor, ACompileOfUnknownRunningTimeCountsAsTheLongest) {
  TreeSample known = Nvcc("known", kMiB, 1, 1, "/src/known.cu");
  TreeSample fresh = Nvcc("new", kMiB, 1, 1, "/src/new.cu");
  BuildGovernor governor(Budget(8 * kGiB), {}, {{HistoryKey(known), 500.0}});
  EXPECT_EQ(governor.Tick({known, fresh}, 0).pause, std::vector<std::string>{"known"});
}

TEST(BuildGovernor, AFinishedCompileReportsTheTimeItRanNotTheTimeItWaited) {
  // Room for one, two ticks a second: a runs 3 ticks; b waits those 3, then
  // runs 2.
  GovernorConfig config = Budget(8 * kGiB);
  config.tick_seconds = 0.5;
  BuildGovernor governor(config);
  TreeSample a = Nvcc("a", kMiB, 1, 1, "/src/a.cu"), b = Nvcc("b", kMiB, 1, 1, "/src/b.cu");
  for (int i = 0; i < 3; ++i) governor.Tick({a, b}, 0);
  for (int i = 0; i < 2; ++i) EXPECT_EQ(governor.Tick({b}, 0).running, 1u);
  governor.Tick({}, 0);
  std::vector<FinishedCompile> finished = governor.TakeFinished();
  ASSERT_EQ(finished.size(), 2u);
  EXPECT_DOUBLE_EQ(finished[0].run_seconds, 1.5);
  EXPECT_DOUBLE_EQ(finished[1].run_seconds, 1.0);
  EXPECT_EQ(finished[1].source, HistoryKey(b));
}

// One compile's curve in an earlier build: 2, 6, 12 GiB, its peak passed at
// step 3 (2 s steps), then a 3 and a 2 GiB tail.
CompileCurve TwelveGiBPeak() {
  return {.steps = {2 * kGiB, 6 * kGiB, 12 * kGiB, 3 * kGiB, 2 * kGiB}, .peak_passed_step = 3, .ended = true};
}

TEST(BuildGovernor, ACompileStartsWhileAnotherPeaksWhenItsClimbMeetsTheOthersDrop) {
  // 21 GiB less 1 of headroom; each peak is 12 GiB (a file's own curve
  // has no fixed margin): two peaks never fit together, but b's climb (6
  // GiB in its first step) fits beside a's last step at its peak.
  GovernorConfig config = Budget(21 * kGiB);
  config.tick_seconds = 1.0;  // a 2 s step is two ticks
  TreeSample a = Nvcc("a", 2 * kGiB, 1, 1, "/src/a.cu"), b = Nvcc("b", 100 * kMiB, 1, 1, "/src/b.cu");
  auto run = [&](bool with_curves) {
    std::map<std::string, CompileCurve> curves;
    if (with_curves) curves = {{HistoryKey(a), TwelveGiBPeak()}, {HistoryKey(b), TwelveGiBPeak()}};
    BuildGovernor governor(config, {{HistoryKey(a), 12 * kGiB}, {HistoryKey(b), 12 * kGiB}}, {}, curves);
    std::vector<GovernorDecision> decisions;
    // a at progress 0-4: 2, 2, 6, 6, then 12 GiB (step 2, its last at the peak).
    for (uint64_t rss : {2 * kGiB, 2 * kGiB, 6 * kGiB, 6 * kGiB, 12 * kGiB}) {
      a.rss_bytes = rss;
      decisions.push_back(governor.Tick({a, b}, 0));
    }
    return decisions;
  };
  std::vector<GovernorDecision> forecast = run(true);
  EXPECT_EQ(forecast[0].pause, std::vector<std::string>{"b"});
  for (size_t tick = 1; tick < 4; ++tick) EXPECT_TRUE(forecast[tick].resume.empty()) << tick;
  EXPECT_EQ(forecast[4].resume, std::vector<std::string>{"b"});
  // Without the curves b waits for a's peak to pass.
  EXPECT_TRUE(run(false)[4].resume.empty());
}

TEST(BuildGovernor, ACompileWithTooFewCoresAdvancesItsCurveByTheShareItGot) {
  // Two cores, four busy processes: each tick is half a tick of progress.
  auto steps_after_four_ticks = [](uint32_t cores) {
    GovernorConfig config = Budget(20 * kGiB);
    config.tick_seconds = 1.0;
    config.cores = cores;
    BuildGovernor governor(config);
    TreeSample busy = Nvcc("busy", kGiB, 1, 1, "/src/busy.cu");
    busy.busy = 4;
    for (int tick = 0; tick < 4; ++tick) governor.Tick({busy}, 0);
    governor.Tick({}, 0);
    std::vector<FinishedCompile> finished = governor.TakeFinished();
    return finished.size() == 1 ? finished[0].curve.steps.size() : 0;
  };
  EXPECT_EQ(steps_after_four_ticks(0), 2u);  // progress 0-3: two 2-tick steps
  EXPECT_EQ(steps_after_four_ticks(2), 1u);  // progress 0-1.5: one
}

TEST(BuildGovernor, RunningCompilesKeepTheirPlaceBeforeALongerOneNotYetStarted) {
  // Room for one: the short compile runs; the long one, seen later, waits
  // rather than pausing it part-way.
  TreeSample quick = Nvcc("quick", kMiB, 1, 1, "/src/quick.cu");
  TreeSample slow = Nvcc("slow", kMiB, 1, 1, "/src/slow.cu");
  BuildGovernor governor(Budget(8 * kGiB), {}, {{HistoryKey(quick), 10.0}, {HistoryKey(slow), 100.0}});
  EXPECT_EQ(governor.Tick({quick}, 0).running, 1u);
  EXPECT_EQ(governor.Tick({quick, slow}, 0).pause, std::vector<std::string>{"slow"});
}

TEST(BuildGovernor, PeersPastTheirPeakForecastAFreshCompile) {
  // Each compile: 1, 3, 6 GiB for two ticks each, then 1 GiB (2-tick steps:
  // its peak passes at step 3). p1, p2 went before; p3 is at its last step
  // at its peak when a fourth starts. With constant reservations p3's and
  // the fourth's 6.5 GiB peaks and two 1.25 GiB tails (15.5 GiB) do not fit
  // in 13; by their forecasts the fourth's climb meets p3's drop.
  GovernorConfig config = Budget(14 * kGiB);
  config.tick_seconds = 1.0;
  BuildGovernor governor(config);
  auto rss_at = [](int tick) {
    const uint64_t climb[] = {1, 1, 3, 3, 6, 6};
    return tick < 6 ? climb[tick] * kGiB : kGiB;
  };
  const std::vector<std::pair<std::string, int>> starts = {{"p1", 0}, {"p2", 8}, {"p3", 16}, {"new", 20}};
  GovernorDecision decision;
  for (int tick = 0; tick <= 20; ++tick) {
    std::vector<TreeSample> trees;
    for (const auto& [id, start] : starts) {
      if (tick >= start) trees.push_back(Nvcc(id, id == "new" ? 100 * kMiB : rss_at(tick - start)));
    }
    decision = governor.Tick(trees, 0);
    ASSERT_EQ(decision.paused, 0u) << "tick " << tick;
  }
  EXPECT_EQ(decision.running, 4u);
}

TEST(BuildGovernor, ARunningCompileIsPausedForWhatComesSoonNotForWhatMayComeLater) {
  // x and z's last build: 1 GiB for 10 s, then an 8 GiB peak (x 1.1: 8.8).
  // y has no history: 6.5 GiB, then 7.5 as it shows more. 16 GiB to plan with.
  const CompileCurve late_peak{.steps = {kGiB, kGiB, kGiB, kGiB, kGiB, 8 * kGiB, kGiB},
                               .peak_passed_step = 6, .ended = true};
  TreeSample x = Nvcc("x", kGiB, 1, 1, "/src/x.cu"), z = Nvcc("z", kGiB, 1, 1, "/src/z.cu"), y = Nvcc("y", kGiB);
  BuildGovernor governor(Budget(17 * kGiB), {{HistoryKey(x), 8 * kGiB}, {HistoryKey(z), 8 * kGiB}}, {},
                         {{HistoryKey(x), late_peak}, {HistoryKey(z), late_peak}});
  EXPECT_EQ(governor.Tick({y, x}, 0).running, 2u) << "6.5 + 8.8 fits";
  y.rss_bytes = 7 * kGiB + kGiB / 2;
  GovernorDecision decision = governor.Tick({y, x, z}, 0);
  // x runs on: its next steps fit, and its peak beside y's 7.5 is 10 s off
  // (y may be done by then; if not, x is paused then, still small). z, not
  // started, must fit through its peak: it waits.
  EXPECT_EQ(decision.pause, std::vector<std::string>{"z"});
}

TEST(BuildGovernor, ACompileToStartMustFitThroughItsPeakNotThroughItsTail) {
  // x's last build peaks at 4 GiB, then 1 GiB with an 8 GiB bump 12-14 s
  // later (x 1.1: 4.4, 1.1, 8.8); w's is 4 GiB then 1. Beside y's 7.5 GiB,
  // w's tail meets x's bump over the 16 GiB; w's peak does not: w starts.
  const CompileCurve bump{.steps = {4 * kGiB, kGiB, kGiB, kGiB, kGiB, kGiB, kGiB, 8 * kGiB, kGiB},
                          .peak_passed_step = 1, .ended = true};
  const CompileCurve tail{.steps = {4 * kGiB, kGiB, kGiB, kGiB, kGiB, kGiB, kGiB, kGiB, kGiB, kGiB},
                          .peak_passed_step = 1, .ended = true};
  TreeSample x = Nvcc("x", kGiB, 1, 1, "/src/x.cu"), w = Nvcc("w", kGiB, 1, 1, "/src/w.cu"), y = Nvcc("y", kGiB);
  GovernorConfig config = Budget(17 * kGiB);
  config.tick_seconds = 1.0;  // a 2 s step is two ticks
  BuildGovernor governor(config, {{HistoryKey(x), 4 * kGiB}, {HistoryKey(w), 4 * kGiB}}, {},
                         {{HistoryKey(x), bump}, {HistoryKey(w), tail}});
  y.rss_bytes = 7 * kGiB + kGiB / 2;
  for (uint64_t rss : {4 * kGiB, 4 * kGiB, kGiB, kGiB}) {  // x past its peak
    x.rss_bytes = rss;
    ASSERT_EQ(governor.Tick({y, x}, 0).running, 2u);
  }
  EXPECT_TRUE(governor.Tick({y, x, w}, 0).pause.empty());
}

TEST(BuildGovernor, PeersTeachTheirPeakOnceItHasPassed) {
  // Two one-arch compiles passed a 4 GiB peak (still running their tails):
  // a third is predicted from them (x 1.15), not from the 6.5 GiB model.
  BuildGovernor governor(Budget(100 * kGiB));
  for (uint64_t rss : {kGiB, 4 * kGiB, kGiB}) governor.Tick({Nvcc("p1", rss), Nvcc("p2", rss)}, 0);
  governor.Tick({Nvcc("p1", kGiB), Nvcc("p2", kGiB), Nvcc("new", kMiB)}, 0);
  EXPECT_EQ(governor.PredictedPeak("new"), static_cast<uint64_t>(4.0 * 1.15 * static_cast<double>(kGiB)));
}

TEST(BuildGovernor, AFileIsPredictedFromItsFamilyBeforeItsHeavierPeers) {
  // Five archs on four threads: two bwd files passed a 20 GiB peak, two fwd
  // files a 16 GiB one, a fwd_split file a 12 GiB one. A fwd file of another
  // head dim and type is predicted from its family (16 x 1.3), not from the
  // heaviest peer (20 x 1.15); a family that has shown one peak, or none, is
  // not enough.
  BuildGovernor governor(Budget(200 * kGiB));
  const std::vector<std::string> files = {"src/flash_bwd_hdim64_bf16_sm80.cu", "src/flash_bwd_hdim128_bf16_sm80.cu",
                                          "src/flash_fwd_hdim64_bf16_sm80.cu", "src/flash_fwd_hdim128_bf16_sm80.cu",
                                          "src/flash_fwd_split_hdim64_bf16_sm80.cu"};
  auto tick = [&](std::vector<uint64_t> rss_gib) {
    std::vector<TreeSample> trees;
    for (size_t i = 0; i < files.size(); ++i) {
      trees.push_back(Nvcc("c" + std::to_string(i), rss_gib[i] * kGiB, 5, 4, files[i]));
    }
    trees.push_back(Nvcc("fwd256", kMiB, 5, 4, "other/flash_fwd_hdim256_fp16_sm80.cu"));
    trees.push_back(Nvcc("split128", kMiB, 5, 4, "src/flash_fwd_split_hdim128_bf16_sm80.cu"));
    trees.push_back(Nvcc("causal", kMiB, 5, 4, "src/flash_fwd_hdim64_bf16_causal_sm80.cu"));
    governor.Tick(trees, 0);
  };
  tick({2, 2, 2, 2, 2});
  tick({20, 20, 16, 16, 12});
  tick({6, 6, 4, 4, 3});  // every one passed its peak
  const double gib = static_cast<double>(kGiB);
  EXPECT_EQ(governor.PredictedPeak("fwd256"), static_cast<uint64_t>(16 * 1.3 * gib));
  EXPECT_EQ(governor.PredictedPeak("split128"), static_cast<uint64_t>(20 * 1.15 * gib));
  EXPECT_EQ(governor.PredictedPeak("causal"), static_cast<uint64_t>(20 * 1.15 * gib));
}

TEST(BuildGovernor, AFreshCompileClimbsAsItsFamilyDidNotAsItsFastestPeer) {
  // Two families of one-arch compiles, each run alone before: fast_N.cu
  // peaks at once (6 GiB for a step, then 1 GiB), slow_N.cu peaks late (1 GiB
  // for three steps, 6 for one, then 1). A fast one is at its peak when a
  // slow one comes: by its family the slow one's peak comes after the fast
  // one's drop (7 GiB at most, in 10); by the envelope of all its peers it
  // would peak at once (12).
  GovernorConfig config = Budget(11 * kGiB);
  config.tick_seconds = 1.0;  // a 2 s step is two ticks
  BuildGovernor governor(config);
  auto fast = [](int age) { return age < 2 ? 6 * kGiB : kGiB; };
  auto slow = [](int age) { return age >= 6 && age < 8 ? 6 * kGiB : kGiB; };
  struct Run {
    std::string source;
    int start, ticks;
  };
  const std::vector<Run> before = {{"k/fast_1.cu", 0, 8}, {"k/fast_2.cu", 8, 8}, {"k/slow_1.cu", 16, 14},
                                   {"k/slow_2.cu", 30, 14}};
  for (const Run& run : before) {
    for (int age = 0; age < run.ticks; ++age) {
      const bool is_fast = run.source.find("fast") != std::string::npos;
      ASSERT_EQ(governor.Tick({Nvcc(run.source, is_fast ? fast(age) : slow(age), 1, 1, run.source)}, 0).paused, 0u);
    }
  }
  ASSERT_EQ(governor.Tick({}, 0).running, 0u);
  TreeSample fast_3 = Nvcc("fast_3", fast(0), 1, 1, "k/fast_3.cu");
  ASSERT_EQ(governor.Tick({fast_3}, 0).running, 1u);
  GovernorDecision decision = governor.Tick({fast_3, Nvcc("slow_3", 100 * kMiB, 1, 1, "k/slow_3.cu")}, 0);
  EXPECT_EQ(decision.running, 2u);
  EXPECT_TRUE(decision.pause.empty());
}

TEST(BuildGovernor, PastItsPeakACompileHoldsWhatAllItsPeersHeldNotItsFamilyAlone) {
  // fa_N.cu ends 2 s after its 6 GiB peak; fb_N.cu holds 3 GiB for 10 s
  // after it. A third fa is past its peak at 1 GiB when another compile
  // comes: by all its peers' tails it may still hold 3 GiB, and the
  // newcomer's 6.5 GiB peak does not fit beside that in 9 GiB; by its
  // family's alone it would.
  GovernorConfig config = Budget(10 * kGiB);
  config.tick_seconds = 1.0;  // a 2 s step is two ticks
  BuildGovernor governor(config);
  const std::vector<uint64_t> fa = {6 * kGiB, 6 * kGiB, kGiB, kGiB};
  std::vector<uint64_t> fb = {6 * kGiB, 6 * kGiB};
  fb.resize(22, 3 * kGiB);
  for (const auto& [source, trace] : std::vector<std::pair<std::string, std::vector<uint64_t>>>{
           {"k/fa_1.cu", fa}, {"k/fa_2.cu", fa}, {"k/fb_1.cu", fb}, {"k/fb_2.cu", fb}}) {
    for (uint64_t rss : trace) ASSERT_EQ(governor.Tick({Nvcc(source, rss, 1, 1, source)}, 0).paused, 0u);
  }
  ASSERT_EQ(governor.Tick({}, 0).running, 0u);
  TreeSample fa_3 = Nvcc("fa_3", 6 * kGiB, 1, 1, "k/fa_3.cu");
  for (int tick = 0; tick < 2; ++tick) ASSERT_EQ(governor.Tick({fa_3}, 0).running, 1u);
  fa_3.rss_bytes = kGiB;
  GovernorDecision decision = governor.Tick({fa_3, Nvcc("x", 100 * kMiB, 1, 1, "k/x_1.cu")}, 0);
  EXPECT_EQ(decision.pause, std::vector<std::string>{"x"});
}

TEST(FileFamily, IsTheNamesWordsWithoutADigit) {
  EXPECT_EQ(FileFamily(Nvcc("a", 0, 1, 1, "csrc/flash_attn/src/flash_bwd_hdim64_fp16_sm80.cu")), "flash_bwd");
  EXPECT_EQ(FileFamily(Nvcc("b", 0, 1, 1, "flash_fwd_split_hdim256_bf16_causal_sm80.cu")), "flash_fwd_split_causal");
  EXPECT_EQ(FileFamily(Nvcc("c", 0, 1, 1, "/k/gemm-f16-128x64.cpp")), "gemm");
  EXPECT_EQ(FileFamily(Nvcc("d", 0, 1, 1, "/src/conv/conv3x3.cu")), "") << "no word left: no family";
  EXPECT_EQ(FileFamily(Nvcc("e", 0, 1, 1, "/src/sm80.cu")), "");
  EXPECT_EQ(FileFamily(Nvcc("f", 0, 1, 1, "/src/2d/kernel.v2.cu")), "kernel") << "the file's own name, less its extension";
  EXPECT_EQ(FileFamily(Nvcc("g", 0, 1, 1, ".hidden")), "hidden");
  EXPECT_EQ(FileFamily(Nvcc("h", 0)), "");
}

TEST(BuildGovernor, AForecastRunOverRaisesTheMarginAndItFadesAsForecastsHold) {
  // a's curve says at most 6 GiB in its first step; it shows 7.2: forecasts
  // are scaled by 1.2 from then, less as they hold.
  TreeSample a = Nvcc("a", 2 * kGiB, 1, 1, "/src/a.cu");
  BuildGovernor governor(Budget(100 * kGiB), {{HistoryKey(a), 12 * kGiB}}, {}, {{HistoryKey(a), TwelveGiBPeak()}});
  governor.Tick({a}, 0);
  EXPECT_DOUBLE_EQ(governor.margin(), 1.0);
  a.rss_bytes = 7 * kGiB + kGiB / 5;
  governor.Tick({a}, 0);
  EXPECT_NEAR(governor.margin(), 1.2, 0.001);
  // Its forecast now covers 7.2 GiB: no further miss.
  for (int tick = 0; tick < 100; ++tick) governor.Tick({a}, 0);
  EXPECT_LT(governor.margin(), 1.15);
  EXPECT_GT(governor.margin(), 1.0);
}

TEST(BuildGovernor, PastWhatItsPeersShowedACompilesNextWaveIsItsOwnPeaksShare) {
  // Two five-arch compiles on four threads: the first wave of one peaks at
  // 8 GiB, of the other at 16; both have passed it (four cicc runs ended)
  // and hold 1 GiB, past what either has shown. The fifth arch's peak is
  // planned at a quarter of each one's own peak (x 1.15): 1 + 2.3 and
  // 1 + 4.6 GiB, not a quarter of the peers' highest for both (2 x 5.6).
  GovernorConfig config = Budget(100 * kGiB);
  config.tick_seconds = 1.0;
  BuildGovernor governor(config);
  auto five = [](std::string id, uint64_t rss, uint32_t ciccs_done) {
    TreeSample sample = Nvcc(std::move(id), rss, 5, 4);
    sample.device_compiles_done = ciccs_done;
    return sample;
  };
  GovernorDecision decision;
  for (uint64_t high : {kGiB, kGiB, 8 * kGiB, 8 * kGiB}) decision = governor.Tick({five("p1", high, 0), five("p2", 2 * high, 0)}, 0);
  for (int tick = 0; tick < 3; ++tick) decision = governor.Tick({five("p1", kGiB, 4), five("p2", kGiB, 4)}, 0);
  EXPECT_LT(decision.planned_bytes, 9 * kGiB);
  EXPECT_GT(decision.planned_bytes, 8 * kGiB);
}

}  // namespace
}  // namespace gpuctl::build
