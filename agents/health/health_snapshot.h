// One sample of the host and its GPUs: the plain model that the service
// layer translates to the wire and the client prints.
#pragma once

#include <chrono>
#include <cstdint>
#include <optional>
#include <string>

#include "agents/sys/gpu_types.h"
#include "agents/sys/host_fs.h"
#include "agents/sys/proc_parsers.h"
#include "agents/sys/where_running.h"

namespace gpuctl::health {

struct HostHealth {
  std::string hostname;
  std::string kernel;
  std::string os_release;
  uint32_t cpus = 0;
  sys::LoadAverage load;
  double uptime_seconds = 0;
  uint64_t mem_total_bytes = 0;
  uint64_t mem_available_bytes = 0;
  uint64_t swap_total_bytes = 0;
  uint64_t swap_free_bytes = 0;
  std::optional<sys::Pressure> memory_pressure;  // nullopt without PSI
  sys::CgroupVersion cgroup_version = sys::CgroupVersion::kUnknown;
  sys::WhereRunning where;  // the answer probe and provisioning give too
};

struct HealthSnapshot {
  std::chrono::system_clock::time_point sampled_at;
  HostHealth host;
  sys::GpuReport gpus;
};

}  // namespace gpuctl::health
