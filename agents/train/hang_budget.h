// How long a run may go without progress before it counts as hung: pure,
// so each rule is a unit test. Before its first step a run has the start
// budget (--start-timeout: loading a model and compiling kernels take
// long); after it, the user's --hang-after, or else max(4 x the p99
// interval between steps so far, 60 s), which follows a run whose steps
// slow down (a longer sequence length) and leaves room for an eval or a
// checkpoint save that prints nothing.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "agents/train/job_spec.h"

namespace gpuctl::train {

inline constexpr int64_t kMinLearnedBudgetMs = 60'000;
inline constexpr int64_t kLearnedBudgetFactor = 4;

// The intervals between a run's steps, the newest kKept of them.
class StepIntervals {
 public:
  static constexpr size_t kKept = 1024;
  void Add(int64_t interval_ms);
  bool empty() const { return intervals_.empty(); }
  size_t size() const { return intervals_.size(); }
  // The 99th percentile (nearest rank); 0 when empty.
  int64_t P99() const;

 private:
  std::vector<int64_t> intervals_;  // a ring once full
  size_t next_ = 0;
};

struct HangBudget {
  int64_t ms = 0;
  std::string source;  // "--hang-after", "--start-timeout", "learned"
};

// `steps_seen`: a step was read since the run (or the agent watching it)
// started. A run past its first step whose intervals are not known yet (an
// agent restarted mid-run) keeps the start budget until it has one, unless
// --hang-after says.
HangBudget DecideHangBudget(const HangOptions& options, bool steps_seen, const StepIntervals& intervals);

}  // namespace gpuctl::train
