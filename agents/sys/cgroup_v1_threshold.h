// A cgroup v1 memory threshold: the kernel signals an eventfd whenever
// memory.usage_in_bytes crosses the threshold, either way (cgroup-v1
// memory.txt, "Memory thresholds"). The check runs every 128 page charge
// events per CPU, so the wake comes within about 512 KiB per CPU of the line.
#pragma once

#include <chrono>
#include <cstdint>
#include <memory>
#include <string>

#include "agents/sys/memory_pressure_waiter.h"
#include "agents/sys/unique_fd.h"

namespace gpuctl::sys {

class CgroupV1Threshold final : public MemoryPressureWaiter {
 public:
  // Registers "<eventfd> <fd of memory.usage_in_bytes> <threshold>" with
  // `cgroup_dir`/cgroup.event_control (`cgroup_dir` as from
  // CgroupDriver::Directory). Errors: kInvalidArgument (threshold 0),
  // kNotFound (no such cgroup, or a kernel without v1 memory events),
  // kPermissionDenied, kIo.
  static Result<std::unique_ptr<CgroupV1Threshold>> Register(const std::string& cgroup_dir,
                                                             uint64_t threshold_bytes);

  // kWoke on a crossing in either direction, or when the cgroup is removed
  // (the kernel signals every registered eventfd then; the next Read of the
  // cgroup fails with kNotFound). Consumes the notification.
  Result<WaitOutcome> Wait(std::chrono::milliseconds timeout) override;

  uint64_t threshold_bytes() const { return threshold_bytes_; }

 private:
  CgroupV1Threshold(UniqueFd event, UniqueFd usage, uint64_t threshold_bytes);

  UniqueFd event_;
  // Kept open: the kernel ties the registration to this file, and closing
  // the eventfd (not this) is what unregisters.
  UniqueFd usage_;
  uint64_t threshold_bytes_;
};

// The line written to cgroup.event_control: "<event_fd> <usage_fd> <bytes>".
std::string FormatThresholdRegistration(int event_fd, int usage_fd, uint64_t threshold_bytes);

}  // namespace gpuctl::sys
