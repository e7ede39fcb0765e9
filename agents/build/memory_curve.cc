#include "agents/build/memory_curve.h"

#include <algorithm>
#include <optional>

namespace gpuctl::build {

uint64_t FirstPeak(const CompileCurve& curve) {
  if (curve.peak_passed_step < 0 || curve.steps.empty()) return 0;
  const size_t through = std::min(static_cast<size_t>(curve.peak_passed_step) + 1, curve.steps.size());
  return *std::max_element(curve.steps.begin(), curve.steps.begin() + static_cast<long>(through));
}

CurveShape ShapeOf(const std::vector<const CompileCurve*>& curves) {
  CurveShape shape;
  size_t latest_pass = 0;
  bool any = false;
  for (const CompileCurve* curve : curves) {
    if (curve->peak_passed_step < 0 || curve->steps.empty()) continue;
    any = true;
    latest_pass = std::max(latest_pass, static_cast<size_t>(curve->peak_passed_step));
  }
  if (!any) return shape;
  shape.climb.assign(std::max<size_t>(latest_pass, 1), 0.0);
  for (const CompileCurve* curve : curves) {
    if (curve->peak_passed_step < 0 || curve->steps.empty()) continue;
    const size_t pass = std::min(static_cast<size_t>(curve->peak_passed_step), curve->steps.size());
    const uint64_t peak = FirstPeak(*curve);
    if (peak == 0) continue;
    auto fraction = [&](size_t step) { return static_cast<double>(curve->steps[step]) / static_cast<double>(peak); };
    for (size_t step = 0; step < shape.climb.size(); ++step) {
      shape.climb[step] = std::max(shape.climb[step], step < pass ? fraction(step) : 1.0);
    }
    shape.complete = shape.complete || curve->ended;
    const size_t after = curve->steps.size() - pass;
    if (shape.after.size() < after) shape.after.resize(after, 0.0);
    for (size_t step = 0; step < after; ++step) shape.after[step] = std::max(shape.after[step], fraction(pass + step));
  }
  return shape;
}

Forecast ForecastOf(const CurveShape& shape, const ForecastInput& input) {
  const bool passed = input.passed_step >= 0;
  int64_t age = input.age_steps;
  if (!passed) {
    // The earliest step of the climb that reaches its memory: it is at
    // least that slow (the climb is the fastest of its peers).
    for (size_t step = 0; step < shape.climb.size() && static_cast<int64_t>(step) < age; ++step) {
      if (shape.climb[step] * static_cast<double>(input.peak_bytes) >= static_cast<double>(input.rss_bytes)) {
        age = static_cast<int64_t>(step);
        break;
      }
    }
  }
  // Where, in the shape, the compile's `after` starts.
  const int64_t after_from =
      passed ? input.passed_step : std::max<int64_t>(static_cast<int64_t>(shape.climb.size()), age + 1);
  // The fraction at one of the compile's steps; nothing: the shape says no more.
  auto fraction = [&](int64_t step) -> std::optional<double> {
    if (step < after_from) {
      return step < static_cast<int64_t>(shape.climb.size()) ? shape.climb[static_cast<size_t>(step)] : 1.0;
    }
    // A compile past its peak is past the drop its pass step holds (that
    // step's highest is the peak's): its own memory stands for it.
    const int64_t at = passed && step == after_from && shape.after.size() > 1 ? 1 : step - after_from;
    if (at < static_cast<int64_t>(shape.after.size())) return shape.after[static_cast<size_t>(at)];
    return std::nullopt;
  };
  Forecast forecast;
  const int64_t end = after_from + static_cast<int64_t>(shape.after.size());
  forecast.beyond = shape.complete && age < end ? 0 : input.fallback_bytes;
  auto bytes = [&](std::optional<double> f) {
    return f ? static_cast<uint64_t>(*f * static_cast<double>(input.peak_bytes)) : forecast.beyond;
  };
  forecast.peak_ends = passed ? 0 : static_cast<size_t>(after_from - age);
  for (int64_t step = age;; ++step) {
    std::optional<double> here = fraction(step), next = fraction(step + 1);
    if (!here && !next) break;
    forecast.steps.push_back(std::max(bytes(here), bytes(next)));
  }
  return forecast;
}

}  // namespace gpuctl::build
