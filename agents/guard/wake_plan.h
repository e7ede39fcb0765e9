// When the guard looks next, as a pure function of its last reading.
//
// Two ways to wake. A kernel event armed at the lines the guard decides on:
// a v1 usage threshold counts memory.usage_in_bytes, which includes file
// cache, while the guard counts reclaimable cache as available; so the line
// in the kernel's units moves whenever the cache does, and is re-armed from
// each reading (usage now plus the distance to the line). And a poll whose
// interval is the time the fastest plausible growth takes to reach the kill
// line: long while far from it, a few ms in the last stretch. The poll alone
// catches what no event reports (host MemAvailable, cache reclaimed at the
// limit, a crossing between a read and the arming).
#pragma once

#include <chrono>
#include <cstdint>
#include <vector>

#include "agents/guard/decide.h"
#include "agents/guard/guard_config.h"
#include "agents/guard/memory_domain.h"
#include "common/units.h"

namespace gpuctl::guard {

// The fastest growth the poll is sized for: a runaway that takes this much
// a second is still seen within the fast poll of crossing the kill line.
inline constexpr uint64_t kFastestGrowthBytesPerSecond = 8 * kGiB;
// The shortest sleep: below the warn line the guard reads every 5 ms.
inline constexpr std::chrono::milliseconds kFastPoll{5};

struct WakePlan {
  // memory.usage_in_bytes values at which available memory reaches the warn
  // and kill lines still ahead, ascending; empty where no usage figure applies
  // (the host domain, a cgroup without a limit).
  std::vector<uint64_t> usage_lines;
  std::chrono::milliseconds poll{kFastPoll};
};

WakePlan PlanWake(const DomainReading& reading, const GuardDecision& decision, const GuardConfig& config);

}  // namespace gpuctl::guard
