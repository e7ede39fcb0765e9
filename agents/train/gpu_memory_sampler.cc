#include "agents/train/gpu_memory_sampler.h"

#include <cstdio>
#include <map>

#include "agents/train/gpu_owners.h"
#include "agents/train/job_gpu_memory.h"
#include "common/event_kinds.h"
#include "common/units.h"

namespace gpuctl::train {

GpuMemorySampler::GpuMemorySampler(std::function<sys::GpuReport()> read_gpus, std::chrono::milliseconds interval,
                                   sys::ProcessControl& processes)
    : read_gpus_(std::move(read_gpus)), interval_(interval), processes_(processes) {}

void GpuMemorySampler::Tick(JobTable& table, TimePoint now) {
  if (!read_gpus_) return;
  if (now < next_sample_) return;
  next_sample_ = now + interval_;
  bool any_running = false;
  table.ForEach([&](const JobEntry& entry) { any_running = any_running || IsActive(entry.record.state); });
  if (!any_running) return;
  const sys::GpuReport report = read_gpus_();
  auto owners = GpuOwnersOf(table, processes_);
  auto owner = [&](uint32_t pid) -> std::optional<std::string> {
    std::optional<GpuProcessOwner> job = owners(pid);
    if (!job || !job->running) return std::nullopt;
    if (JobEntry* entry = table.Find(job->job); entry && entry->gpu_pids.size() < kMaxGpuPidsPerRun) {
      entry->gpu_pids.insert(pid);  // told apart as this run's after it ends
    }
    return job->job;
  };
  std::map<std::string, std::vector<JobGpuMemory>> uses = AttributeGpuMemory(report.devices, owner);
  table.ForEach([&](JobEntry& entry) {
    JobRecord& r = entry.record;
    if (!IsActive(r.state)) return;
    const std::vector<JobGpuMemory> before = r.gpu_memory;
    std::vector<JobGpuMemory> high = UpdateGpuMemory(r.gpu_memory, uses[r.spec.name]);
    for (const JobGpuMemory& m : high) {
      double pct = 100.0 * static_cast<double>(m.used_bytes) / static_cast<double>(m.total_bytes);
      char share[16];
      std::snprintf(share, sizeof share, "%.1f%%", pct);
      table.PublishEvent(event_kind::kGpuMemoryHigh, r,
                         "GPU " + std::to_string(m.index) + " at " + share + ": " + FormatBytes(m.used_bytes) +
                             " of " + FormatBytes(m.total_bytes),
                         {{"gpu", m.index}, {"uuid", m.uuid}, {"used_bytes", m.used_bytes},
                          {"total_bytes", m.total_bytes}, {"percent", pct}});
    }
    if (!high.empty()) (void)table.Save(entry);
    if (r.gpu_memory != before) table.Publish(entry);
  });
}

}  // namespace gpuctl::train
