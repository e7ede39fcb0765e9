// The hang budget's rules: the start budget before the first step, the
// user's --hang-after after it, else 4 x the p99 step interval, never under
// 60 s.
#include "agents/train/hang_budget.h"

#include <gtest/gtest.h>

namespace gpuctl::train {
namespace {

TEST(StepIntervals, P99IsTheNearestRankAndForgetsTheOldest) {
  StepIntervals intervals;
  EXPECT_EQ(intervals.P99(), 0);
  for (int i = 1; i <= 100; ++i) intervals.Add(i * 10);  // 10 .. 1000 ms
  EXPECT_EQ(intervals.P99(), 990);
  intervals.Add(5000);  // one slow step among 101
  EXPECT_EQ(intervals.P99(), 1000);
  for (size_t i = 0; i < StepIntervals::kKept; ++i) intervals.Add(200);
  EXPECT_EQ(intervals.size(), StepIntervals::kKept);
  EXPECT_EQ(intervals.P99(), 200);  // the slow ones fell out of the window
}

TEST(HangBudget, BeforeTheFirstStepTheStartTimeoutApplies) {
  HangOptions options;
  options.after_ms = 5'000;
  StepIntervals none;
  HangBudget b = DecideHangBudget(options, /*steps_seen=*/false, none);
  EXPECT_EQ(b.ms, kDefaultStartTimeoutMs);
  EXPECT_EQ(b.source, "--start-timeout");
  options.start_timeout_ms = 3'000;
  EXPECT_EQ(DecideHangBudget(options, false, none).ms, 3'000);
}

TEST(HangBudget, AfterTheFirstStepHangAfterWins) {
  HangOptions options;
  options.after_ms = 5'000;
  StepIntervals intervals;
  intervals.Add(100'000);
  HangBudget b = DecideHangBudget(options, true, intervals);
  EXPECT_EQ(b.ms, 5'000);
  EXPECT_EQ(b.source, "--hang-after");
}

TEST(HangBudget, LearnedIsFourTimesTheP99ButAtLeastAMinute) {
  HangOptions options;
  StepIntervals fast;
  for (int i = 0; i < 50; ++i) fast.Add(1'000);
  HangBudget b = DecideHangBudget(options, true, fast);
  EXPECT_EQ(b.ms, kMinLearnedBudgetMs);
  EXPECT_EQ(b.source, "learned");
  StepIntervals slow;
  for (int i = 0; i < 50; ++i) slow.Add(30'000);
  EXPECT_EQ(DecideHangBudget(options, true, slow).ms, 120'000);
}

TEST(HangBudget, StepsSeenWithoutIntervalsKeepTheStartBudget) {
  // An agent restarted mid-run has seen one step and no interval yet.
  HangOptions options;
  options.start_timeout_ms = 7'000;
  StepIntervals none;
  EXPECT_EQ(DecideHangBudget(options, true, none).ms, 7'000);
}

}  // namespace
}  // namespace gpuctl::train
