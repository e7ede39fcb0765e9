#include "agents/train/job_gpu_memory.h"

#include <algorithm>

#include "common/json_integer.h"

namespace gpuctl::train {

std::map<std::string, std::vector<JobGpuMemory>> AttributeGpuMemory(
    const std::vector<sys::GpuDevice>& gpus, const std::function<std::optional<std::string>(uint32_t pid)>& owner) {
  std::map<std::string, std::vector<JobGpuMemory>> by_job;
  std::map<uint32_t, std::optional<std::string>> owners;  // a pid on several GPUs is looked up once
  for (const sys::GpuDevice& gpu : gpus) {
    for (const sys::GpuProcessInfo& process : gpu.processes) {
      auto known = owners.find(process.pid);
      if (known == owners.end()) known = owners.emplace(process.pid, owner(process.pid)).first;
      if (!known->second) continue;
      std::vector<JobGpuMemory>& uses = by_job[*known->second];
      auto use = std::find_if(uses.begin(), uses.end(), [&](const JobGpuMemory& m) { return m.index == gpu.index; });
      if (use == uses.end()) {
        uses.push_back({gpu.index, gpu.uuid, 0, 0, gpu.memory_total_bytes.value_or(0), false});
        use = uses.end() - 1;
      }
      use->used_bytes += process.used_memory_bytes;
    }
  }
  return by_job;
}

std::vector<JobGpuMemory> UpdateGpuMemory(std::vector<JobGpuMemory>& memory, const std::vector<JobGpuMemory>& now) {
  for (JobGpuMemory& m : memory) m.used_bytes = 0;
  std::vector<JobGpuMemory> high;
  for (const JobGpuMemory& reading : now) {
    auto it = std::find_if(memory.begin(), memory.end(), [&](const JobGpuMemory& m) { return m.index == reading.index; });
    if (it == memory.end()) {
      memory.push_back({reading.index, reading.uuid, 0, 0, reading.total_bytes, false});
      it = memory.end() - 1;
    }
    it->used_bytes = reading.used_bytes;
    it->peak_bytes = std::max(it->peak_bytes, reading.used_bytes);
    if (reading.total_bytes > 0) it->total_bytes = reading.total_bytes;
    bool over = it->total_bytes > 0 &&
                static_cast<double>(it->used_bytes) >= kGpuMemoryHighFraction * static_cast<double>(it->total_bytes);
    if (over && !it->high_reported) {
      it->high_reported = true;
      high.push_back(*it);
    }
  }
  std::sort(memory.begin(), memory.end(), [](const JobGpuMemory& a, const JobGpuMemory& b) { return a.index < b.index; });
  return high;
}

bool CgroupHolds(std::string_view process_cgroup, std::string_view job_cgroup) {
  return !job_cgroup.empty() && process_cgroup.starts_with(job_cgroup) &&
         (process_cgroup.size() == job_cgroup.size() || process_cgroup[job_cgroup.size()] == '/');
}

bool ContainerCgroupHolds(std::string_view process_cgroup, std::string_view vmid) {
  if (vmid.empty()) return false;
  for (const char* prefix : {"/lxc/", "/lxc.payload."}) {
    const std::string head = prefix + std::string(vmid);
    for (size_t at = process_cgroup.find(head); at != std::string_view::npos;
         at = process_cgroup.find(head, at + 1)) {
      const size_t end = at + head.size();
      if (end == process_cgroup.size() || process_cgroup[end] == '/') return true;
    }
  }
  return false;
}

nlohmann::json ToJson(const JobGpuMemory& m) {
  return {{"index", m.index},           {"uuid", m.uuid},           {"used_bytes", m.used_bytes},
          {"peak_bytes", m.peak_bytes}, {"total_bytes", m.total_bytes}, {"high_reported", m.high_reported}};
}

JobGpuMemory JobGpuMemoryFromJson(const nlohmann::json& j) {
  JobGpuMemory m;
  m.index = JsonIntegerOr(j, "index", uint32_t{0});
  m.uuid = j.value("uuid", "");
  m.used_bytes = JsonIntegerOr(j, "used_bytes", uint64_t{0});
  m.peak_bytes = JsonIntegerOr(j, "peak_bytes", uint64_t{0});
  m.total_bytes = JsonIntegerOr(j, "total_bytes", uint64_t{0});
  m.high_reported = j.value("high_reported", false);
  return m;
}

}  // namespace gpuctl::train
