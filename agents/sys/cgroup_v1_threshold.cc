#include "agents/sys/cgroup_v1_threshold.h"

#include <fcntl.h>
#include <poll.h>
#include <sys/eventfd.h>
#include <unistd.h>

#include <cerrno>
#include <algorithm>
#include <climits>
#include <utility>

#include "agents/sys/cgroup_io.h"

namespace gpuctl::sys {

std::string FormatThresholdRegistration(int event_fd, int usage_fd, uint64_t threshold_bytes) {
  return std::to_string(event_fd) + " " + std::to_string(usage_fd) + " " + std::to_string(threshold_bytes);
}

CgroupV1Threshold::CgroupV1Threshold(UniqueFd event, UniqueFd usage, uint64_t threshold_bytes)
    : event_(std::move(event)), usage_(std::move(usage)), threshold_bytes_(threshold_bytes) {}

Result<std::unique_ptr<CgroupV1Threshold>> CgroupV1Threshold::Register(const std::string& cgroup_dir,
                                                                       uint64_t threshold_bytes) {
  if (threshold_bytes == 0) return InvalidArgument("a memory threshold must be above 0 bytes");
  UniqueFd event(::eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK));
  if (!event.valid()) return CgroupErrno("cannot create an eventfd", errno);
  const std::string usage_file = cgroup_dir + "/memory.usage_in_bytes";
  UniqueFd usage(::open(usage_file.c_str(), O_RDONLY | O_CLOEXEC));
  if (!usage.valid()) return CgroupErrno("cannot open " + usage_file, errno);
  Status s = WriteControlFile(cgroup_dir + "/cgroup.event_control",
                              FormatThresholdRegistration(event.get(), usage.get(), threshold_bytes));
  if (!s.ok()) return s.Wrap("registering a memory threshold");
  return std::unique_ptr<CgroupV1Threshold>(
      new CgroupV1Threshold(std::move(event), std::move(usage), threshold_bytes));
}

Result<WaitOutcome> CgroupV1Threshold::Wait(std::chrono::milliseconds timeout) {
  pollfd p{event_.get(), POLLIN, 0};
  // poll takes int milliseconds, and a negative one would wait for ever.
  int ms = static_cast<int>(std::clamp<int64_t>(timeout.count(), 0, INT_MAX));
  int n = ::poll(&p, 1, ms);
  if (n < 0) {
    // A signal cut the wait short: a spurious wake, which the contract allows.
    if (errno == EINTR) return WaitOutcome::kWoke;
    return CgroupErrno("waiting for the memory threshold", errno);
  }
  if (n == 0) return WaitOutcome::kTimedOut;
  if ((p.revents & (POLLERR | POLLNVAL)) != 0) return Unavailable("the memory threshold eventfd failed");
  uint64_t count = 0;
  if (::read(event_.get(), &count, sizeof count) < 0 && errno != EAGAIN) {
    return CgroupErrno("reading the memory threshold eventfd", errno);
  }
  return WaitOutcome::kWoke;
}

}  // namespace gpuctl::sys
