#include "agents/train/hang_budget.h"

#include <algorithm>

namespace gpuctl::train {

void StepIntervals::Add(int64_t interval_ms) {
  if (interval_ms < 0) interval_ms = 0;
  if (intervals_.size() < kKept) {
    intervals_.push_back(interval_ms);
    return;
  }
  intervals_[next_] = interval_ms;
  next_ = (next_ + 1) % kKept;
}

int64_t StepIntervals::P99() const {
  if (intervals_.empty()) return 0;
  std::vector<int64_t> sorted = intervals_;
  // Nearest rank: the smallest value at or above 99% of them.
  size_t rank = (sorted.size() * 99 + 99) / 100;  // ceil(0.99 n), at least 1
  std::nth_element(sorted.begin(), sorted.begin() + static_cast<std::ptrdiff_t>(rank - 1), sorted.end());
  return sorted[rank - 1];
}

HangBudget DecideHangBudget(const HangOptions& options, bool steps_seen, const StepIntervals& intervals) {
  if (!steps_seen) return {options.start_timeout_ms, "--start-timeout"};
  if (options.after_ms) return {*options.after_ms, "--hang-after"};
  if (intervals.empty()) return {options.start_timeout_ms, "--start-timeout"};
  return {std::max(kLearnedBudgetFactor * intervals.P99(), kMinLearnedBudgetMs), "learned"};
}

}  // namespace gpuctl::train
