// Cgroup v1 memory thresholds: the kernel signals an eventfd whenever
// memory.usage_in_bytes crosses a threshold, either way (cgroup-v1
// memory.txt, "Memory thresholds"). The check runs every 128 page charge
// events per CPU, so the wake comes within about 512 KiB per CPU of the line.
//
// The lines can be moved (ArmAt): the guard's lines count reclaimable cache
// as available, usage counts it as used, so the usage at which the guard's
// line is reached moves with the cache. Each line has its own eventfd;
// closing an eventfd is what unregisters it (the kernel has no other way).
#pragma once

#include <chrono>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

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

  // kWoke on a crossing of any armed line in either direction, or when the
  // cgroup is removed (the kernel signals every registered eventfd then;
  // the next Read of the cgroup fails with kNotFound). Consumes the
  // notifications.
  Result<WaitOutcome> Wait(std::chrono::milliseconds timeout) override;

  // Replaces the armed lines with `usage_lines` (zeros dropped); no write
  // when they are the ones armed. On an error the old lines stay armed.
  Status ArmAt(const std::vector<uint64_t>& usage_lines) override;

  const std::vector<uint64_t>& armed_lines() const { return lines_; }

 private:
  CgroupV1Threshold(std::string cgroup_dir, UniqueFd usage);
  Result<UniqueFd> RegisterLine(uint64_t bytes) const;

  std::string cgroup_dir_;
  // Kept open: the kernel ties each registration to this file.
  UniqueFd usage_;
  std::vector<uint64_t> lines_;
  std::vector<UniqueFd> events_;  // one per line, same order
};

// The line written to cgroup.event_control: "<event_fd> <usage_fd> <bytes>".
std::string FormatThresholdRegistration(int event_fd, int usage_fd, uint64_t threshold_bytes);

}  // namespace gpuctl::sys
