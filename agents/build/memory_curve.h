// A compile's memory over its running time, and the forecast of what a
// running compile will hold from now on, from the curves of compiles that
// went before it: the same file in an earlier build, or its peers in this one.
//
// Why: a compile climbs to its peak (cicc) for a third of its life, then
// holds a low tail (ptxas, the host compile). Reserving the peak until it
// passes keeps memory idle that a compile started now could use: its own
// climb is low for tens of seconds, and by the time it peaks the running
// ones have passed theirs. The clairvoyant schedule wins exactly so; a
// forecast over time lets the live governor do the same.
//
// Pure: steps of running time, no clock.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

namespace gpuctl::build {

// The curves' resolution: fine enough to see a climb of ~30 s, coarse
// enough that a forecast is a few hundred numbers.
inline constexpr double kCurveStepSeconds = 2.0;

// One compile's memory: the highest in each step of its running time (paused
// time left out), and the step in which its first (fullest) peak was seen to
// pass; -1: not yet.
struct CompileCurve {
  std::vector<uint64_t> steps;
  int32_t peak_passed_step = -1;
  bool ended = false;  // the compile ran to its end: the curve is whole
};

// How compiles of one kind go, as fractions of their first peak: `climb`,
// step by step from the start until the latest of them passed its peak (a
// curve counts 1 from its own pass on: it could have still been there), then
// `after`, each curve aligned at its own pass, the highest at each step.
struct CurveShape {
  std::vector<double> climb;
  std::vector<double> after;
  // One of them ended: a compile of this kind ends where `after` does.
  bool complete = false;
  bool empty() const { return climb.empty(); }
};

// The highest of a curve up to and through its pass step (that step may
// hold the peak just before the drop); 0 before its peak passed.
uint64_t FirstPeak(const CompileCurve& curve);

// The envelope of the curves whose peak passed; empty when none did.
CurveShape ShapeOf(const std::vector<const CompileCurve*>& curves);

// What a compile will hold in each step from now (steps[0]: the one under
// way), then `beyond` for ever after.
struct Forecast {
  std::vector<uint64_t> steps;
  uint64_t beyond = 0;
  size_t peak_ends = 0;  // steps until the peak has passed (0: it has)
  uint64_t At(size_t step) const { return step < steps.size() ? steps[step] : beyond; }
};

struct ForecastInput {
  uint64_t peak_bytes = 0;       // the shape's 1.0
  uint32_t age_steps = 0;        // steps it has run
  int32_t passed_step = -1;      // when its own peak passed; -1: not yet
  // What it holds where the shape says nothing more: past an `after` not yet
  // seen whole, or once it has outlived a complete shape.
  uint64_t fallback_bytes = 0;
  // What it holds now. Before its peak, a compile slowed down (cores shared
  // with more lanes than there are) is no further up its climb than its
  // memory shows, whatever its age.
  uint64_t rss_bytes = 0;
};

// Not yet past its peak: the shape's climb from its age, then the peak held
// until the latest pass the shape knows (or the next step, if it is later
// than that already), then `after`. Past its peak: `after` from its own pass.
// A complete shape ends the compile with its `after` (0 beyond), unless it
// has outlived it already.
// Each step counts the larger of the shape's two steps it may straddle.
Forecast ForecastOf(const CurveShape& shape, const ForecastInput& input);

}  // namespace gpuctl::build
