#include "agents/train/gpu_owners.h"

#include <map>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "agents/train/job_gpu_memory.h"

namespace gpuctl::train {
namespace {

// A run that ended this recently may still show in a GPU reading (readings
// are cached, and a process's memory is freed as it exits): its pids are
// told apart as its own, never taken for someone else's.
constexpr int64_t kRecentRunMs = 30'000;

}  // namespace

std::function<std::optional<GpuProcessOwner>(uint32_t)> GpuOwnersOf(const JobTable& table,
                                                                     sys::ProcessControl& processes) {
  struct Known {
    std::map<int64_t, std::string> groups;                        // running jobs' process groups
    std::vector<std::pair<std::string, std::string>> cgroups;     // cgroup, job (running)
    std::vector<std::pair<std::string, std::string>> containers;  // VMID, job (running container jobs)
    std::map<uint32_t, GpuProcessOwner> pids;                     // seen of runs, running or recent
  };
  auto known = std::make_shared<Known>();
  const int64_t now = table.NowMs();
  table.ForEach([&](const JobEntry& entry) {
    const JobRecord& r = entry.record;
    const std::string& name = r.spec.name;
    const bool running = IsActive(r.state);
    if (entry.previous_ended_unix_ms > 0 && now - entry.previous_ended_unix_ms < kRecentRunMs) {
      for (uint32_t pid : entry.previous_gpu_pids) known->pids.try_emplace(pid, GpuProcessOwner{name, false});
    }
    const bool recent = !running && r.ended_unix_ms > 0 && now - r.ended_unix_ms < kRecentRunMs;
    if (!running && !recent) return;
    for (uint32_t pid : entry.gpu_pids) known->pids[pid] = {name, running};
    if (!running) return;
    if (r.pgid > 0) known->groups[r.pgid] = name;
    if (r.inner_pgid > 0) known->groups[r.inner_pgid] = name;
    if (!r.cgroup.empty()) known->cgroups.emplace_back(r.cgroup, name);
    if (!r.spec.container.empty()) known->containers.emplace_back(r.spec.container, name);
  });
  return [&processes, known](uint32_t pid) -> std::optional<GpuProcessOwner> {
    if (std::optional<int64_t> group = processes.ProcessGroup(pid)) {
      if (auto it = known->groups.find(*group); it != known->groups.end()) return GpuProcessOwner{it->second, true};
    }
    // A worker that left its job's process group (setsid) is still in its
    // job's cgroup, or its container's.
    if (!known->cgroups.empty() || !known->containers.empty()) {
      if (std::optional<std::string> cgroup = processes.MemoryCgroup(pid)) {
        for (const auto& [job_cgroup, job] : known->cgroups) {
          if (CgroupHolds(*cgroup, job_cgroup)) return GpuProcessOwner{job, true};
        }
        for (const auto& [vmid, job] : known->containers) {
          if (ContainerCgroupHolds(*cgroup, vmid)) return GpuProcessOwner{job, true};
        }
      }
    }
    if (auto it = known->pids.find(pid); it != known->pids.end()) return it->second;
    return std::nullopt;
  };
}

}  // namespace gpuctl::train
