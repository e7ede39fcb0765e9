#include "agents/build/memory_curve.h"

#include <gtest/gtest.h>

namespace gpuctl::build {
namespace {

// A: climbs 2, 4, 8 and passes its peak at step 3; B: 4, 8, passes at 2.
CompileCurve CurveA(bool ended = true) { return {.steps = {2, 4, 8, 2, 1}, .peak_passed_step = 3, .ended = ended}; }
CompileCurve CurveB(bool ended = true) { return {.steps = {4, 8, 2, 2}, .peak_passed_step = 2, .ended = ended}; }

TEST(ShapeOf, IsTheEnvelopeOfItsCurvesAsFractionsAlignedAtEachPass) {
  CompileCurve a = CurveA(), b = CurveB(), climbing{.steps = {9, 9}, .peak_passed_step = -1, .ended = false};
  CurveShape shape = ShapeOf({&a, &b, &climbing});
  // The climb runs to the latest pass; B counts its peak from its own pass.
  EXPECT_EQ(shape.climb, (std::vector<double>{0.5, 1.0, 1.0}));
  EXPECT_EQ(shape.after, (std::vector<double>{0.25, 0.25}));
  EXPECT_TRUE(shape.complete);
  EXPECT_TRUE(ShapeOf({&climbing}).empty()) << "a curve whose peak has not passed tells no shape";
}

TEST(ShapeOf, IsCompleteOnlyWhenOneOfItsCurvesEnded) {
  CompileCurve a = CurveA(false), b = CurveB(false);
  EXPECT_FALSE(ShapeOf({&a, &b}).complete);
}

TEST(ForecastOf, AFreshCompileClimbsHoldsItsPeakUntilTheLatestPassThenFollowsTheTail) {
  CompileCurve a = CurveA(), b = CurveB();
  Forecast forecast = ForecastOf(ShapeOf({&a, &b}), {.peak_bytes = 16, .age_steps = 0, .passed_step = -1,
                                                     .fallback_bytes = 100, .rss_bytes = 0});
  // Each step counts the larger of the two it may straddle; a complete shape ends it.
  EXPECT_EQ(forecast.steps, (std::vector<uint64_t>{16, 16, 16, 4, 4}));
  EXPECT_EQ(forecast.beyond, 0u);
}

TEST(ForecastOf, PastWhatAPartialShapeKnowsItFallsBack) {
  CompileCurve a = CurveA(false), b = CurveB(false);
  Forecast forecast = ForecastOf(ShapeOf({&a, &b}), {.peak_bytes = 16, .age_steps = 0, .passed_step = -1,
                                                     .fallback_bytes = 100, .rss_bytes = 0});
  EXPECT_EQ(forecast.steps, (std::vector<uint64_t>{16, 16, 16, 4, 100}));
  EXPECT_EQ(forecast.beyond, 100u);
}

TEST(ForecastOf, ACompilePastItsPeakFollowsTheTailFromItsOwnPass) {
  CompileCurve a = CurveA(), b = CurveB();
  CurveShape shape = ShapeOf({&a, &b});
  Forecast forecast =
      ForecastOf(shape, {.peak_bytes = 16, .age_steps = 3, .passed_step = 2, .fallback_bytes = 100, .rss_bytes = 4});
  EXPECT_EQ(forecast.steps, (std::vector<uint64_t>{4}));
  EXPECT_EQ(forecast.beyond, 0u);
  // Outlived its shape: what it holds is not known, the fallback for ever.
  Forecast late =
      ForecastOf(shape, {.peak_bytes = 16, .age_steps = 6, .passed_step = 2, .fallback_bytes = 100, .rss_bytes = 4});
  EXPECT_TRUE(late.steps.empty());
  EXPECT_EQ(late.beyond, 100u);
}

TEST(ForecastOf, ASlowedCompileIsNoFurtherUpItsClimbThanItsMemoryShows) {
  CompileCurve a = CurveA(), b = CurveB();
  CurveShape shape = ShapeOf({&a, &b});
  // At step 2 by its age and at its peak: where the climb first reaches it, step 1 ...
  Forecast on_time =
      ForecastOf(shape, {.peak_bytes = 16, .age_steps = 2, .passed_step = -1, .fallback_bytes = 100, .rss_bytes = 16});
  EXPECT_EQ(on_time.steps, (std::vector<uint64_t>{16, 16, 4, 4}));
  // ... but at 4 of 16 it is where the climb first reaches 4: step 0.
  Forecast slowed =
      ForecastOf(shape, {.peak_bytes = 16, .age_steps = 2, .passed_step = -1, .fallback_bytes = 100, .rss_bytes = 4});
  EXPECT_EQ(slowed.steps, (std::vector<uint64_t>{16, 16, 16, 4, 4}));
}

TEST(ShapeOf, APeakInThePassStepIsTheCurvesOne) {
  // Sampled every 0.25 s, the peak and the drop below half of it often
  // fall in one 2 s step: that step's highest is the peak.
  CompileCurve curve{.steps = {2, 4, 8, 1}, .peak_passed_step = 2, .ended = true};
  EXPECT_EQ(FirstPeak(curve), 8u);
  EXPECT_EQ(ShapeOf({&curve}).after, (std::vector<double>{1.0, 0.125}));
}

TEST(ForecastOf, ACompileSeenPastItsPeakIsPastTheDropItsPassStepHolds) {
  CompileCurve curve{.steps = {2, 8, 4, 1}, .peak_passed_step = 2, .ended = true};
  Forecast forecast = ForecastOf(ShapeOf({&curve}), {.peak_bytes = 16, .age_steps = 2, .passed_step = 2,
                                                      .fallback_bytes = 100, .rss_bytes = 1});
  EXPECT_EQ(forecast.steps, (std::vector<uint64_t>{2, 2})) << "not the 8 of the step it dropped in";
}

}  // namespace
}  // namespace gpuctl::build
