#include "agents/guard/memory_budget.h"

namespace gpuctl::guard {

MemoryBudget BudgetOf(const DomainReading& reading, const GuardConfig& config) {
  return {.domain_total_bytes = reading.total_bytes,
          .available_bytes = reading.available_bytes,
          .reserve_bytes = ReserveBytes(config, reading.total_bytes)};
}

}  // namespace gpuctl::guard
