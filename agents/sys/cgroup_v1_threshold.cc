#include "agents/sys/cgroup_v1_threshold.h"

#include <fcntl.h>
#include <poll.h>
#include <sys/eventfd.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <climits>
#include <utility>

#include "agents/sys/cgroup_io.h"

namespace gpuctl::sys {

std::string FormatThresholdRegistration(int event_fd, int usage_fd, uint64_t threshold_bytes) {
  return std::to_string(event_fd) + " " + std::to_string(usage_fd) + " " + std::to_string(threshold_bytes);
}

CgroupV1Threshold::CgroupV1Threshold(std::string cgroup_dir, UniqueFd usage)
    : cgroup_dir_(std::move(cgroup_dir)), usage_(std::move(usage)) {}

Result<std::unique_ptr<CgroupV1Threshold>> CgroupV1Threshold::Register(const std::string& cgroup_dir,
                                                                       uint64_t threshold_bytes) {
  if (threshold_bytes == 0) return InvalidArgument("a memory threshold must be above 0 bytes");
  const std::string usage_file = cgroup_dir + "/memory.usage_in_bytes";
  UniqueFd usage(::open(usage_file.c_str(), O_RDONLY | O_CLOEXEC));
  if (!usage.valid()) return CgroupErrno("cannot open " + usage_file, errno);
  std::unique_ptr<CgroupV1Threshold> threshold(new CgroupV1Threshold(cgroup_dir, std::move(usage)));
  if (Status s = threshold->ArmAt({threshold_bytes}); !s.ok()) return s;
  return threshold;
}

Result<UniqueFd> CgroupV1Threshold::RegisterLine(uint64_t bytes) const {
  UniqueFd event(::eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK));
  if (!event.valid()) return CgroupErrno("cannot create an eventfd", errno);
  Status s = WriteControlFile(cgroup_dir_ + "/cgroup.event_control",
                              FormatThresholdRegistration(event.get(), usage_.get(), bytes));
  if (!s.ok()) return s.Wrap("registering a memory threshold");
  return event;
}

Status CgroupV1Threshold::ArmAt(const std::vector<uint64_t>& usage_lines) {
  std::vector<uint64_t> lines;
  for (uint64_t line : usage_lines) {
    if (line > 0) lines.push_back(line);
  }
  if (lines == lines_) return Status::Ok();
  std::vector<UniqueFd> events;
  for (uint64_t line : lines) {
    Result<UniqueFd> event = RegisterLine(line);
    if (!event.ok()) return event.status();  // the new ones close: unregistered
    events.push_back(std::move(event).value());
  }
  lines_ = std::move(lines);
  events_ = std::move(events);  // the old eventfds close: unregistered
  return Status::Ok();
}

Result<WaitOutcome> CgroupV1Threshold::Wait(std::chrono::milliseconds timeout) {
  std::vector<pollfd> fds;
  for (const UniqueFd& event : events_) fds.push_back({event.get(), POLLIN, 0});
  // poll takes int milliseconds, and a negative one would wait for ever.
  int ms = static_cast<int>(std::clamp<int64_t>(timeout.count(), 0, INT_MAX));
  int n = ::poll(fds.data(), fds.size(), ms);
  if (n < 0) {
    // A signal cut the wait short: a spurious wake, which the contract allows.
    if (errno == EINTR) return WaitOutcome::kWoke;
    return CgroupErrno("waiting for the memory threshold", errno);
  }
  if (n == 0) return WaitOutcome::kTimedOut;
  for (const pollfd& p : fds) {
    if ((p.revents & (POLLERR | POLLNVAL)) != 0) return Unavailable("the memory threshold eventfd failed");
    if ((p.revents & POLLIN) == 0) continue;
    uint64_t count = 0;
    if (::read(p.fd, &count, sizeof count) < 0 && errno != EAGAIN) {
      return CgroupErrno("reading the memory threshold eventfd", errno);
    }
  }
  return WaitOutcome::kWoke;
}

}  // namespace gpuctl::sys
