// The supervisor's view of GPU memory: whose each GPU process is (a job's by
// its process group or its cgroup, so a worker that called setsid stays its
// job's; a run that just ended by the pids seen of it), each running job's
// memory on each GPU now and at the run's peak, and gpu_memory_high when a
// job's GPU passes 95%. NVML reports host pids, and a container job's group
// is kept by its host pid.
#include <cstdio>
#include <set>

#include "agents/train/job_gpu_memory.h"
#include "agents/train/job_supervisor.h"
#include "common/units.h"

namespace gpuctl::train {
namespace {

// A run that ended this recently may still show in a GPU reading (readings
// are cached, and a process's memory is freed as it exits): its pids are
// told apart as its own, never taken for someone else's.
constexpr int64_t kRecentRunMs = 30'000;
// Pids remembered per run: a run has a few workers per GPU.
constexpr size_t kMaxGpuPidsPerRun = 1024;

}  // namespace

std::function<std::optional<GpuProcessOwner>(uint32_t)> JobSupervisor::GpuOwners() {
  struct Known {
    std::map<int64_t, std::string> groups;                  // running jobs' process groups
    std::vector<std::pair<std::string, std::string>> cgroups;  // cgroup, job (running)
    std::vector<std::pair<std::string, std::string>> containers;  // VMID, job (running container jobs)
    std::map<uint32_t, GpuProcessOwner> pids;               // seen of runs, running or recent
  };
  auto known = std::make_shared<Known>();
  const int64_t now = NowMs();
  for (const auto& [name, entry] : entries_) {
    const JobRecord& r = entry->record;
    const bool running = IsActive(r.state);
    if (entry->previous_ended_unix_ms > 0 && now - entry->previous_ended_unix_ms < kRecentRunMs) {
      for (uint32_t pid : entry->previous_gpu_pids) known->pids.try_emplace(pid, GpuProcessOwner{name, false});
    }
    const bool recent = !running && r.ended_unix_ms > 0 && now - r.ended_unix_ms < kRecentRunMs;
    if (!running && !recent) continue;
    for (uint32_t pid : entry->gpu_pids) known->pids[pid] = {name, running};
    if (!running) continue;
    if (r.pgid > 0) known->groups[r.pgid] = name;
    if (r.inner_pgid > 0) known->groups[r.inner_pgid] = name;
    if (!r.cgroup.empty()) known->cgroups.emplace_back(r.cgroup, name);
    if (!r.spec.container.empty()) known->containers.emplace_back(r.spec.container, name);
  }
  return [this, known](uint32_t pid) -> std::optional<GpuProcessOwner> {
    if (std::optional<int64_t> group = processes_.ProcessGroup(pid)) {
      if (auto it = known->groups.find(*group); it != known->groups.end()) return GpuProcessOwner{it->second, true};
    }
    // A worker that left its job's process group (setsid) is still in its
    // job's cgroup, or its container's.
    if (!known->cgroups.empty() || !known->containers.empty()) {
      if (std::optional<std::string> cgroup = processes_.MemoryCgroup(pid)) {
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

void JobSupervisor::SampleGpuMemory() {
  if (!options_.read_gpus) return;
  const auto now = clock_.SteadyNow();
  if (now < next_gpu_sample_) return;
  next_gpu_sample_ = now + options_.gpu_memory_interval;
  bool any_running = false;
  for (const auto& [name, entry] : entries_) any_running = any_running || IsActive(entry->record.state);
  if (!any_running) return;
  const sys::GpuReport report = options_.read_gpus();
  auto owners = GpuOwners();
  auto owner = [&](uint32_t pid) -> std::optional<std::string> {
    std::optional<GpuProcessOwner> job = owners(pid);
    if (!job || !job->running) return std::nullopt;
    if (auto it = entries_.find(job->job); it != entries_.end() && it->second->gpu_pids.size() < kMaxGpuPidsPerRun) {
      it->second->gpu_pids.insert(pid);  // told apart as this run's after it ends
    }
    return job->job;
  };
  std::map<std::string, std::vector<JobGpuMemory>> uses = AttributeGpuMemory(report.devices, owner);
  for (auto& [name, entry] : entries_) {
    JobRecord& r = entry->record;
    if (!IsActive(r.state)) continue;
    const std::vector<JobGpuMemory> before = r.gpu_memory;
    std::vector<JobGpuMemory> high = UpdateGpuMemory(r.gpu_memory, uses[r.spec.name]);
    for (const JobGpuMemory& m : high) {
      double pct = 100.0 * static_cast<double>(m.used_bytes) / static_cast<double>(m.total_bytes);
      char share[16];
      std::snprintf(share, sizeof share, "%.1f%%", pct);
      PublishEvent("gpu_memory_high", r,
                   "GPU " + std::to_string(m.index) + " at " + share + ": " + FormatBytes(m.used_bytes) + " of " +
                       FormatBytes(m.total_bytes),
                   {{"gpu", m.index}, {"uuid", m.uuid}, {"used_bytes", m.used_bytes}, {"total_bytes", m.total_bytes},
                    {"percent", pct}});
    }
    if (!high.empty()) (void)Save(*entry);
    if (r.gpu_memory != before) Publish(*entry);
  }
}

}  // namespace gpuctl::train
