// The supervisor's view of GPU memory: each running job's processes on each
// GPU (by process group, as the host numbers them: NVML reports host pids,
// and a container job's group is kept by its host pid), now and at the run's
// peak, and gpu_memory_high when a job's GPU passes 95%.
#include <cstdio>
#include <set>

#include "agents/train/job_gpu_memory.h"
#include "agents/train/job_supervisor.h"
#include "common/units.h"

namespace gpuctl::train {
void JobSupervisor::SampleGpuMemory() {
  if (!options_.read_gpus) return;
  const auto now = clock_.SteadyNow();
  if (now < next_gpu_sample_) return;
  next_gpu_sample_ = now + options_.gpu_memory_interval;
  std::map<int64_t, Entry*> by_group;
  for (auto& [name, entry] : entries_) {
    const JobRecord& r = entry->record;
    if (!IsActive(r.state)) continue;
    if (r.pgid > 0) by_group[r.pgid] = entry.get();
    if (r.inner_pgid > 0) by_group[r.inner_pgid] = entry.get();
  }
  if (by_group.empty()) return;
  const sys::GpuReport report = options_.read_gpus();
  auto owner = [&](uint32_t pid) -> std::optional<std::string> {
    std::optional<int64_t> group = processes_.ProcessGroup(pid);
    auto it = group ? by_group.find(*group) : by_group.end();
    if (it == by_group.end()) return std::nullopt;
    return it->second->record.spec.name;
  };
  std::map<std::string, std::vector<JobGpuMemory>> uses = AttributeGpuMemory(report.devices, owner);
  std::set<Entry*> seen;
  for (auto& [group, entry] : by_group) {
    if (!seen.insert(entry).second) continue;
    JobRecord& r = entry->record;
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
