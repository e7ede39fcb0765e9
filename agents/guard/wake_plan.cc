#include "agents/guard/wake_plan.h"

#include <algorithm>

namespace gpuctl::guard {

WakePlan PlanWake(const DomainReading& reading, const GuardDecision& decision, const GuardConfig& config) {
  WakePlan plan;
  const uint64_t available = reading.available_bytes;
  if (reading.usage_bytes) {
    // Usage grows one for one as available shrinks while the cache stays.
    // A line at or past the limit is never crossed: usage stops at the limit
    // while the kernel reclaims the cache, and the poll watches that stretch.
    for (uint64_t line : {decision.kill_below_bytes, decision.warn_below_bytes}) {
      if (available <= line) continue;
      uint64_t usage_line = *reading.usage_bytes + (available - line);
      if (usage_line < reading.total_bytes) plan.usage_lines.push_back(usage_line);
    }
    std::sort(plan.usage_lines.begin(), plan.usage_lines.end());
    plan.usage_lines.erase(std::unique(plan.usage_lines.begin(), plan.usage_lines.end()), plan.usage_lines.end());
  }
  if (decision.action != GuardAction::kNone || available <= decision.kill_below_bytes) return plan;
  const uint64_t distance = available - decision.kill_below_bytes;
  const auto to_line = std::chrono::milliseconds(distance / (kFastestGrowthBytesPerSecond / 1000));
  plan.poll = std::clamp(to_line, kFastPoll, std::max(kFastPoll, config.poll_interval));
  return plan;
}

}  // namespace gpuctl::guard
