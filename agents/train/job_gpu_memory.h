// Each job's GPU memory: NVML's (or nvidia-smi's) per-process memory summed
// per GPU over the processes the job owns, with the peak of the run and the
// GPU's total. Pure: the supervisor says which job owns a pid (its process
// group, as the host numbers it: NVML reports host pids, and a container
// job's processes are known by their host pids).
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "agents/sys/gpu_types.h"

namespace gpuctl::train {

// A job's use of one GPU, now and at its peak in this run.
struct JobGpuMemory {
  uint32_t index = 0;
  std::string uuid;
  uint64_t used_bytes = 0;
  uint64_t peak_bytes = 0;
  uint64_t total_bytes = 0;  // 0: unknown
  bool high_reported = false;  // gpu_memory_high was published for this run
  bool operator==(const JobGpuMemory&) const = default;
};

// gpu_memory_high fires when a job's GPU passes this share of its total.
inline constexpr double kGpuMemoryHighFraction = 0.95;

// The memory each job's processes use on each GPU, by job name. `owner`
// names the job a pid belongs to, or nullopt.
std::map<std::string, std::vector<JobGpuMemory>> AttributeGpuMemory(
    const std::vector<sys::GpuDevice>& gpus, const std::function<std::optional<std::string>(uint32_t pid)>& owner);

// Folds a reading into a run's memory: `now` gives the GPUs in use now
// (a GPU the run used before and not now reads 0). Returns the GPUs that
// passed kGpuMemoryHighFraction for the first time in this run.
std::vector<JobGpuMemory> UpdateGpuMemory(std::vector<JobGpuMemory>& memory, const std::vector<JobGpuMemory>& now);

// Whether a process whose memory cgroup is `process_cgroup` (as
// /proc/PID/cgroup names it) is in cgroup `job_cgroup` or below it.
bool CgroupHolds(std::string_view process_cgroup, std::string_view job_cgroup);
// Whether it is in the cgroup of LXC container `vmid` as the host names it:
// a path component "lxc/VMID" (Proxmox: /lxc/200/ns/...) or
// "lxc.payload.VMID" (LXC 4+: /lxc.payload.200/...).
bool ContainerCgroupHolds(std::string_view process_cgroup, std::string_view vmid);

nlohmann::json ToJson(const JobGpuMemory& memory);
JobGpuMemory JobGpuMemoryFromJson(const nlohmann::json& json);

}  // namespace gpuctl::train
