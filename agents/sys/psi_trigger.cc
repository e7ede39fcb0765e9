#include "agents/sys/psi_trigger.h"

#include <fcntl.h>
#include <poll.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <climits>
#include <utility>

#include "agents/sys/cgroup_io.h"

namespace gpuctl::sys {

Status ValidatePsiTriggerSpec(const PsiTriggerSpec& spec) {
  using std::chrono::microseconds;
  if (spec.window < microseconds(500000) || spec.window > microseconds(10000000)) {
    return InvalidArgument("PSI window " + std::to_string(spec.window.count()) +
                           " us is outside the kernel's 500000..10000000 us");
  }
  if (spec.stall <= microseconds(0) || spec.stall > spec.window) {
    return InvalidArgument("PSI stall " + std::to_string(spec.stall.count()) + " us must be above 0 and at most the " +
                           std::to_string(spec.window.count()) + " us window");
  }
  return Status::Ok();
}

std::string FormatPsiTrigger(const PsiTriggerSpec& spec) {
  return std::string(spec.full ? "full " : "some ") + std::to_string(spec.stall.count()) + " " +
         std::to_string(spec.window.count());
}

Result<std::unique_ptr<PsiTrigger>> PsiTrigger::Open(const std::string& pressure_file, const PsiTriggerSpec& spec) {
  Status valid = ValidatePsiTriggerSpec(spec);
  if (!valid.ok()) return valid;
  UniqueFd fd(::open(pressure_file.c_str(), O_RDWR | O_NONBLOCK | O_CLOEXEC));
  if (!fd.valid()) return CgroupErrno("cannot open " + pressure_file, errno);
  // The kernel overwrites the last byte written with NUL before parsing, so
  // the terminator must be part of the write (as in psi.rst's example) or the
  // window loses its last digit.
  std::string trigger = FormatPsiTrigger(spec);
  ssize_t n = 0;
  do {
    n = ::write(fd.get(), trigger.c_str(), trigger.size() + 1);
  } while (n < 0 && errno == EINTR);
  if (n < 0) {
    int err = errno;
    Status s = CgroupErrno("cannot set PSI trigger '" + trigger + "' on " + pressure_file, err);
    if (err == EINVAL && spec.window.count() % 2000000 != 0) {
      return InvalidArgument(s.message() + " (without CAP_SYS_RESOURCE, as in many containers, the kernel "
                             "accepts only windows that are multiples of 2 s)");
    }
    return s;
  }
  return std::unique_ptr<PsiTrigger>(new PsiTrigger(std::move(fd)));
}

Result<WaitOutcome> PsiTrigger::Wait(std::chrono::milliseconds timeout) {
  // Only POLLPRI is asked for: a pressure file is always readable, and poll
  // reports only what was asked plus errors.
  pollfd p{fd_.get(), POLLPRI, 0};
  int ms = static_cast<int>(std::clamp<int64_t>(timeout.count(), 0, INT_MAX));
  int n = ::poll(&p, 1, ms);
  if (n < 0) {
    if (errno == EINTR) return WaitOutcome::kWoke;  // spurious, allowed
    return CgroupErrno("waiting for the PSI trigger", errno);
  }
  if (n == 0) return WaitOutcome::kTimedOut;
  if ((p.revents & (POLLERR | POLLNVAL)) != 0) {
    return Unavailable("the PSI trigger is gone (its cgroup was removed, or PSI was disabled)");
  }
  return WaitOutcome::kWoke;
}

}  // namespace gpuctl::sys
