// Waiting for the kernel to say memory is getting tight, instead of polling
// alone. Implementations: CgroupV1Threshold (a v1 usage threshold through
// cgroup.event_control) and PsiTrigger (a PSI trigger, host or v2 cgroup).
// The guard waits with a short timeout (<= 100 ms), which is both its polling
// backstop and what keeps shutdown prompt.
#pragma once

#include <chrono>
#include <cstdint>
#include <vector>

#include "common/status.h"

namespace gpuctl::sys {

enum class WaitOutcome {
  kWoke,      // the kernel signalled: re-read the domain now
  kTimedOut,  // nothing within the timeout
};

class MemoryPressureWaiter {
 public:
  virtual ~MemoryPressureWaiter() = default;
  // Blocks up to `timeout` (0 polls). Spurious wakes are allowed: callers
  // re-read the numbers and decide from those, never from the wake alone.
  // Errors: kUnavailable when the source is gone for good (the cgroup was
  // removed), kIo when poll or read fails.
  virtual Result<WaitOutcome> Wait(std::chrono::milliseconds timeout) = 0;

  // Where the next wake should come: memory.usage_in_bytes values, ascending
  // (the guard's lines in the kernel's units, which move with the cache).
  // A waiter that watches something else (a PSI trigger) ignores them.
  // Errors: as Wait's; the old wake-up may then be gone too.
  virtual Status ArmAt(const std::vector<uint64_t>& /*usage_lines*/) { return Status::Ok(); }
};

}  // namespace gpuctl::sys
