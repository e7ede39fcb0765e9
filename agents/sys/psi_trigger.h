// A PSI trigger (Documentation/accounting/psi.rst): the kernel wakes poll()
// with POLLPRI when tasks stalled on memory for `stall` within any `window`.
// Works on /proc/pressure/memory (the host) and on a v2 cgroup's
// memory.pressure. The trigger lives as long as the open file.
#pragma once

#include <chrono>
#include <memory>
#include <string>

#include "agents/sys/memory_pressure_waiter.h"
#include "agents/sys/unique_fd.h"
#include "common/status.h"

namespace gpuctl::sys {

struct PsiTriggerSpec {
  // "full": every non-idle task stalled at once (the machine is thrashing);
  // "some": at least one task stalled.
  bool full = false;
  std::chrono::microseconds stall{150000};
  std::chrono::microseconds window{1000000};
};

// The kernel's limits: window 500 ms..10 s, stall 1 us..window. Openers
// without CAP_SYS_RESOURCE (root in many containers lacks it; this dev
// machine's root does) are further held to windows that are multiples of
// 2 s, which only the kernel can judge: Open reports it. Errors:
// kInvalidArgument naming the bad figure.
Status ValidatePsiTriggerSpec(const PsiTriggerSpec& spec);

// "some 150000 1000000" (microseconds), without terminator.
std::string FormatPsiTrigger(const PsiTriggerSpec& spec);

class PsiTrigger final : public MemoryPressureWaiter {
 public:
  // Opens `pressure_file` and writes the trigger. Errors: kInvalidArgument
  // (bad spec, or the kernel refused it; the message says when a window that
  // is not a multiple of 2 s is the likely reason), kNotFound (no such file: no PSI, or
  // no such cgroup), kFailedPrecondition (PSI disabled, psi=0), kPermissionDenied.
  static Result<std::unique_ptr<PsiTrigger>> Open(const std::string& pressure_file, const PsiTriggerSpec& spec);

  // kWoke when the stall threshold was met in a window. Errors: kUnavailable
  // when the trigger is gone (cgroup removed).
  Result<WaitOutcome> Wait(std::chrono::milliseconds timeout) override;

 private:
  explicit PsiTrigger(UniqueFd fd) : fd_(std::move(fd)) {}
  UniqueFd fd_;
};

}  // namespace gpuctl::sys
