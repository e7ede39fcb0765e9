// The clairvoyant schedule's own correctness on small hand-made traces: it
// is the bar the live governor is measured against, so it must be right.
#include "tests/sim/clairvoyant.h"

#include <gtest/gtest.h>

#include "common/units.h"
#include "tests/sim/build_sim.h"

namespace gpuctl::sim {
namespace {

// Plenty of cores (the cores never slow a compile down); `limit_gib` of
// budget above a 1 GiB reserve.
SimHost ClairvoyantHost(uint64_t limit_gib) {
  return {.cores = 64, .available_bytes = (limit_gib + 1) * kGiB, .reserve_bytes = kGiB};
}

SimCompile TraceOfGiB(const std::string& source, const std::vector<uint64_t>& gib) {
  SimCompile compile{.source = source, .archs = 1, .threads = 1, .rss_bytes = {},
                     .cores = std::vector<uint32_t>(gib.size(), 1)};
  for (uint64_t g : gib) compile.rss_bytes.push_back(g * kGiB);
  return compile;
}

SimRun Clairvoyant() {
  return {.label = "clairvoyant", .max_jobs = 64, .governed = false, .history = {}, .history_seconds = {},
          .history_curves = {}, .clairvoyant = true};
}

TEST(Clairvoyant, TwoCompilesThatFitTogetherRunTogether) {
  SimCompile flat = TraceOfGiB("a", {4, 4, 4, 4, 4, 4, 4, 4});
  SimResult result = Simulate({flat, flat}, ClairvoyantHost(10), Clairvoyant());
  EXPECT_FALSE(result.oom);
  EXPECT_FALSE(result.failed);
  EXPECT_EQ(result.started_s, (std::vector<double>{0, 0}));
  EXPECT_DOUBLE_EQ(result.makespan_s, 8 * kTickSeconds);
  EXPECT_EQ(result.peak_bytes, 8 * kGiB);
}

TEST(Clairvoyant, TwoCompilesThatDoNotFitTogetherAreSerialised) {
  SimCompile flat = TraceOfGiB("a", {6, 6, 6, 6, 6, 6, 6, 6});
  SimResult result = Simulate({flat, flat}, ClairvoyantHost(10), Clairvoyant());
  EXPECT_FALSE(result.failed);
  EXPECT_EQ(result.started_s, (std::vector<double>{0, 8 * kTickSeconds}));
  EXPECT_DOUBLE_EQ(result.makespan_s, 16 * kTickSeconds);
  EXPECT_EQ(result.peak_bytes, 6 * kGiB);
}

TEST(Clairvoyant, PeaksThatNeverMeetRunTogetherThoughTheirSumDoesNotFit) {
  // 8 + 8 GiB of peaks in 10 GiB: an early peak beside a late one fits.
  SimCompile early = TraceOfGiB("early", {8, 8, 1, 1, 1, 1});
  SimCompile late = TraceOfGiB("late", {1, 1, 1, 1, 8, 8});
  SimResult result = Simulate({early, late}, ClairvoyantHost(10), Clairvoyant());
  EXPECT_EQ(result.started_s, (std::vector<double>{0, 0}));
  EXPECT_DOUBLE_EQ(result.makespan_s, 6 * kTickSeconds);
  EXPECT_LE(result.peak_bytes, 10 * kGiB);
}

TEST(Clairvoyant, StartsTheSecondAtTheFirstTickItsWholeFutureFits) {
  // By hand: b started k ticks after a holds a[k + j] + b[j] at its tick j.
  // In 10 GiB, k = 3 is the first that fits (a[3] + b[0] = 8 + 2 = 10, at
  // the limit); in 9 GiB, k = 4. b then runs its 6 ticks.
  SimCompile ramp = TraceOfGiB("a", {2, 4, 6, 8, 2, 2});
  SimResult at_ten = Simulate({ramp, ramp}, ClairvoyantHost(10), Clairvoyant());
  EXPECT_DOUBLE_EQ(at_ten.started_s[1], 3 * kTickSeconds);
  EXPECT_DOUBLE_EQ(at_ten.makespan_s, 9 * kTickSeconds);
  SimResult at_nine = Simulate({ramp, ramp}, ClairvoyantHost(9), Clairvoyant());
  EXPECT_DOUBLE_EQ(at_nine.started_s[1], 4 * kTickSeconds);
  EXPECT_DOUBLE_EQ(at_nine.makespan_s, 10 * kTickSeconds);
  EXPECT_LE(at_nine.peak_bytes, 9 * kGiB);
}

TEST(Clairvoyant, StartsTheLongestFirst) {
  // One at a time fits: they run longest first, ties in the given order.
  SimCompile short_one = TraceOfGiB("short", {6, 6});
  SimCompile long_one = TraceOfGiB("long", {6, 6, 6, 6, 6, 6});
  SimCompile middle = TraceOfGiB("middle", {6, 6, 6, 6});
  SimCompile middle_too = TraceOfGiB("middle too", {6, 6, 6, 6});
  SimResult result = Simulate({short_one, long_one, middle, middle_too}, ClairvoyantHost(10), Clairvoyant());
  EXPECT_EQ(result.started_s, (std::vector<double>{14 * kTickSeconds, 0, 6 * kTickSeconds, 10 * kTickSeconds}));
  EXPECT_DOUBLE_EQ(result.makespan_s, 16 * kTickSeconds);
  EXPECT_EQ(LongestFirst({short_one, long_one, middle, middle_too}), (std::vector<size_t>{1, 2, 3, 0}));
}

TEST(Clairvoyant, ACompileThatCannotFitAloneFailsTheSchedule) {
  SimResult result = Simulate({TraceOfGiB("huge", {4, 12, 4})}, ClairvoyantHost(10), Clairvoyant());
  EXPECT_TRUE(result.failed);
  EXPECT_FALSE(result.oom);
}

TEST(FitsExactly, CountsTheLaterTickOfACompilePartWayThroughOne) {
  // At progress 1.5 the running compile is at tick 1 or 2 when the
  // candidate's first tick is measured: 5 GiB counts, not 1.
  std::vector<uint64_t> running = {kGiB, kGiB, 5 * kGiB, kGiB};
  std::vector<uint64_t> candidate = {5 * kGiB};
  EXPECT_TRUE(FitsExactly({{&running, 1.0}}, candidate, 6 * kGiB));
  EXPECT_FALSE(FitsExactly({{&running, 1.5}}, candidate, 9 * kGiB));
  EXPECT_TRUE(FitsExactly({{&running, 1.5}}, candidate, 10 * kGiB));
  // An ended compile holds nothing.
  EXPECT_TRUE(FitsExactly({{&running, 4.0}}, candidate, 5 * kGiB));
}

TEST(Clairvoyant, NeverPassesTheBudgetWhenTheCoresAreShared) {
  // Two cores for many one-core compiles: progress is fractional, traces
  // stay aligned only to a tick, and the budget still holds.
  SimHost host{.cores = 2, .available_bytes = 13 * kGiB, .reserve_bytes = kGiB};
  std::vector<SimCompile> compiles;
  for (int i = 0; i < 7; ++i) {
    std::vector<uint64_t> gib;
    for (int t = 0; t < 10 + i; ++t) gib.push_back(static_cast<uint64_t>(1 + (t * (i + 3)) % 7));
    compiles.push_back(TraceOfGiB("c" + std::to_string(i), gib));
  }
  SimResult result = Simulate(compiles, host, Clairvoyant());
  EXPECT_FALSE(result.oom);
  EXPECT_FALSE(result.failed);
  EXPECT_LE(result.peak_bytes, 12 * kGiB);
  for (double start : result.started_s) EXPECT_GE(start, 0);
}

}  // namespace
}  // namespace gpuctl::sim
