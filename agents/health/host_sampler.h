// Samples HostHealth from kernel files. Fields that cannot be read are left
// at their defaults and logged once; sampling never fails as a whole unless
// /proc/meminfo itself is unreadable.
#pragma once

#include <atomic>

#include "agents/health/health_snapshot.h"
#include "agents/sys/host_fs.h"
#include "common/status.h"

namespace gpuctl::health {

class HostSampler {
 public:
  explicit HostSampler(const sys::HostFs& fs);
  // Static facts (hostname, kernel, os, cgroup version, container) are read
  // once here; Sample() reads only what changes.
  Result<HostHealth> Sample() const;

 private:
  const sys::HostFs& fs_;
  HostHealth static_facts_;
  // Sample() runs every few hundred ms, possibly from several threads: each
  // unreadable optional field is logged the first time only.
  mutable std::atomic<bool> logged_loadavg_{false};
  mutable std::atomic<bool> logged_uptime_{false};
  mutable std::atomic<bool> logged_pressure_{false};
};

}  // namespace gpuctl::health
