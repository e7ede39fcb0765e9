// What new work may take in the guard's domain before the guard's kill line:
// the domain's available memory now, less the guard's reserve. One function
// gives the guard its line (decide.cc) and a build its budget
// (daemon/server/build_setup.cc), so a governed build, kept inside its
// budget by pausing compiles, never reaches the line the guard kills at:
// both read the same domain (a cgroup's limit, not the host's memory, when
// the guard watches a cgroup) and the same reserve.
#pragma once

#include <cstdint>

#include "agents/guard/guard_config.h"
#include "agents/guard/memory_domain.h"

namespace gpuctl::guard {

struct MemoryBudget {
  uint64_t domain_total_bytes = 0;
  uint64_t available_bytes = 0;
  uint64_t reserve_bytes = 0;  // the guard's kill line
  // What may still be taken: available less the reserve, 0 when below it.
  uint64_t budget_bytes() const { return available_bytes > reserve_bytes ? available_bytes - reserve_bytes : 0; }
};

MemoryBudget BudgetOf(const DomainReading& reading, const GuardConfig& config);

}  // namespace gpuctl::guard
