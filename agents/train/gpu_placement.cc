#include "agents/train/gpu_placement.h"

#include <algorithm>

#include "common/units.h"

namespace gpuctl::train {
namespace {

std::string Plural(uint32_t n) { return std::to_string(n) + (n == 1 ? " GPU" : " GPUs"); }

// Why the GPU is not free for this request; empty when it is.
std::string BusyReason(const GpuSlot& slot, const GpuRequest& request, uint64_t busy_below_bytes) {
  const std::string gpu = "GPU " + std::to_string(slot.index);
  if (!slot.drained.empty()) return gpu + " drained (" + slot.drained + ")";
  if (!slot.held_by.empty()) return gpu + " held by job " + slot.held_by;
  uint64_t foreign = 0;
  std::vector<const ForeignProcess*> seen;  // visible, with a pid: named
  for (const ForeignProcess& p : slot.foreign) {
    foreign += p.bytes;
    if (p.visible && p.pid > 0) seen.push_back(&p);
  }
  if (foreign >= busy_below_bytes && !slot.foreign.empty()) {
    std::string who;
    if (!seen.empty()) {
      const ForeignProcess& biggest =
          **std::max_element(seen.begin(), seen.end(), [](const auto* a, const auto* b) { return a->bytes < b->bytes; });
      who = seen.size() == 1 ? "pid " + std::to_string(biggest.pid)
                             : std::to_string(seen.size()) + " processes (pid " + std::to_string(biggest.pid) +
                                   " the most)";
    }
    if (seen.size() < slot.foreign.size()) {
      who += (who.empty() ? "" : " and ") + std::string("processes this agent cannot see");
    }
    return gpu + " has " + FormatBytes(foreign) + " used by " + who;
  }
  if (request.gpu_mem_bytes && slot.free_bytes < *request.gpu_mem_bytes) {
    return gpu + " has " + FormatBytes(slot.free_bytes) + " free, " + FormatBytes(*request.gpu_mem_bytes) + " asked";
  }
  return {};
}

}  // namespace

std::vector<GpuSlot> GpuSlotsFromReport(const sys::GpuReport& report, const std::map<uint32_t, std::string>& held,
                                        const std::function<std::optional<GpuProcessOwner>(uint32_t pid)>& owner,
                                        const std::function<bool(uint32_t pid)>& visible,
                                        const std::map<uint32_t, uint64_t>& job_bytes) {
  std::vector<GpuSlot> slots;
  for (const sys::GpuDevice& gpu : report.devices) {
    GpuSlot slot{gpu.index, gpu.uuid, gpu.memory_total_bytes.value_or(0), gpu.memory_free_bytes.value_or(0), {}, {},
                 gpu.drain  ? gpu.drain->reason
                 : gpu.lost ? std::string("GPU lost: the driver answers GPU_IS_LOST")
                            : std::string()};
    if (auto it = held.find(gpu.index); it != held.end()) slot.held_by = it->second;
    uint64_t ours = 0, listed = 0;
    for (const sys::GpuProcessInfo& p : gpu.processes) {
      if (std::optional<GpuProcessOwner> job = owner(p.pid)) {
        ours += p.used_memory_bytes;
        if (job->running && slot.held_by.empty()) slot.held_by = job->job;
        continue;
      }
      slot.foreign.push_back({p.pid, p.used_memory_bytes, visible(p.pid)});
      listed += p.used_memory_bytes;
    }
    // No process listed (vGPU, some MIG setups): what the device says is in
    // use, less what the agent's own jobs hold, is someone else's. A GPU a
    // job of ours was given is taken to hold that job's memory (nothing
    // tells it apart), and is held anyway.
    if (gpu.processes.empty() && gpu.memory_used_bytes && slot.held_by.empty()) {
      auto mine = job_bytes.find(gpu.index);
      ours = mine == job_bytes.end() ? 0 : mine->second;
      if (*gpu.memory_used_bytes > ours + listed) {
        slot.foreign.push_back({0, *gpu.memory_used_bytes - ours - listed, false});
      }
    }
    slots.push_back(std::move(slot));
  }
  return slots;
}

std::vector<std::string> SplitGpuList(std::string_view gpus) {
  std::vector<std::string> items;
  while (!gpus.empty()) {
    size_t comma = gpus.find(',');
    if (comma != 0) items.emplace_back(gpus.substr(0, comma));
    if (comma == std::string_view::npos) break;
    gpus.remove_prefix(comma + 1);
  }
  return items;
}

Result<std::vector<uint32_t>> ResolveGpus(const std::vector<std::string>& gpus, const std::vector<GpuSlot>& slots) {
  std::vector<uint32_t> indices;
  for (const std::string& id : gpus) {
    auto slot = std::find_if(slots.begin(), slots.end(), [&](const GpuSlot& s) {
      return s.uuid == id || std::to_string(s.index) == id;
    });
    if (slot == slots.end()) {
      return InvalidArgument("--gpus names GPU " + id + ", and this host has " + Plural(static_cast<uint32_t>(slots.size())) +
                             (slots.empty() ? "" : " (0 to " + std::to_string(slots.size() - 1) + ")"));
    }
    if (std::find(indices.begin(), indices.end(), slot->index) == indices.end()) indices.push_back(slot->index);
  }
  std::sort(indices.begin(), indices.end());
  return indices;
}

bool Placeable(const std::vector<std::string>& gpus, const std::vector<GpuSlot>& slots) {
  for (const std::string& id : gpus) {
    bool number = !id.empty() && id.find_first_not_of("0123456789") == std::string::npos;
    bool known = std::any_of(slots.begin(), slots.end(), [&](const GpuSlot& s) { return s.uuid == id; });
    if (!number && !known) return false;
  }
  return true;
}

Status CheckGpuRequest(const GpuRequest& request, const std::vector<GpuSlot>& slots) {
  if (request.num_gpus > slots.size()) {
    return InvalidArgument("--num-gpus " + std::to_string(request.num_gpus) + " asks for more GPUs than this host has (" +
                           std::to_string(slots.size()) + ")");
  }
  if (!request.gpus.empty()) {
    if (Result<std::vector<uint32_t>> named = ResolveGpus(request.gpus, slots); !named.ok()) return named.status();
  }
  if (request.gpu_mem_bytes) {
    uint64_t largest = 0;
    for (const GpuSlot& s : slots) largest = std::max(largest, s.total_bytes);
    if (*request.gpu_mem_bytes > largest) {
      return InvalidArgument("--gpu-mem " + FormatBytes(*request.gpu_mem_bytes) + " is more than a GPU here has (" +
                             FormatBytes(largest) + ")");
    }
  }
  return Status::Ok();
}

GpuPlacement PlaceJob(const GpuRequest& request, const std::vector<GpuSlot>& slots, uint64_t busy_below_bytes) {
  GpuPlacement placement;
  std::vector<const GpuSlot*> candidates;
  uint32_t wanted = request.num_gpus;
  if (!request.gpus.empty()) {
    Result<std::vector<uint32_t>> named = ResolveGpus(request.gpus, slots);
    if (!named.ok()) {
      placement.waiting_for = named.status().message();
      return placement;
    }
    for (uint32_t index : *named) {
      for (const GpuSlot& s : slots) {
        if (s.index == index) candidates.push_back(&s);
      }
    }
    wanted = static_cast<uint32_t>(candidates.size());
  } else {
    for (const GpuSlot& s : slots) candidates.push_back(&s);
    std::sort(candidates.begin(), candidates.end(), [](const GpuSlot* a, const GpuSlot* b) { return a->index < b->index; });
  }
  if (wanted == 0) wanted = 1;  // --gpu-mem alone: one GPU with that much free
  std::vector<uint32_t> chosen;
  std::string reasons;
  for (const GpuSlot* slot : candidates) {
    std::string busy = BusyReason(*slot, request, busy_below_bytes);
    if (busy.empty()) {
      if (chosen.size() < wanted) chosen.push_back(slot->index);
    } else {
      reasons += (reasons.empty() ? "" : ", ") + busy;
    }
  }
  if (chosen.size() == wanted && (request.gpus.empty() || chosen.size() == candidates.size())) {
    std::sort(chosen.begin(), chosen.end());
    placement.gpus = chosen;
    return placement;
  }
  placement.waiting_for = Plural(wanted) + ": " + (reasons.empty() ? std::string("no GPU known") : reasons);
  return placement;
}

std::vector<std::string> QueueOrder(std::vector<QueuedJob> jobs) {
  std::sort(jobs.begin(), jobs.end(), [](const QueuedJob& a, const QueuedJob& b) {
    if (a.priority != b.priority) return a.priority > b.priority;
    if (a.queued_unix_ms != b.queued_unix_ms) return a.queued_unix_ms < b.queued_unix_ms;
    return a.name < b.name;
  });
  std::vector<std::string> names;
  for (const QueuedJob& j : jobs) names.push_back(j.name);
  return names;
}

std::string VisibleDevices(const std::vector<uint32_t>& gpus) {
  std::string out;
  for (uint32_t g : gpus) out += (out.empty() ? "" : ",") + std::to_string(g);
  return out;
}

StartPlacement DecideStartPlacement(const GpuRequest& request, const std::vector<GpuSlot>& slots,
                                    const std::string& read_error, uint32_t ahead, uint64_t busy_below_bytes) {
  StartPlacement decision;
  if (slots.empty() && (request.num_gpus > 0 || request.gpu_mem_bytes)) {
    decision.kind = StartPlacement::Kind::kRefuse;
    decision.refusal = InvalidArgument("--num-gpus and --gpu-mem need the agent to see the GPUs, and it sees none" +
                                       (read_error.empty() ? std::string() : " (" + read_error + ")"));
    return decision;
  }
  if (slots.empty() || !Placeable(request.gpus, slots)) return decision;  // as asked
  if (Status s = CheckGpuRequest(request, slots); !s.ok()) {
    decision.kind = StartPlacement::Kind::kRefuse;
    decision.refusal = s;
    return decision;
  }
  GpuPlacement placement = PlaceJob(request, slots, busy_below_bytes);
  if (ahead > 0 || placement.gpus.empty()) {
    decision.kind = StartPlacement::Kind::kQueue;
    decision.waiting_for = placement.gpus.empty() ? placement.waiting_for
                                                  : "its turn: " + std::to_string(ahead) + " queued ahead of it";
    return decision;
  }
  decision.gpus = std::move(placement.gpus);
  return decision;
}

std::vector<Admission> PlanAdmissions(const std::vector<QueuedRequest>& in_order, std::vector<GpuSlot> slots,
                                      const std::string& read_error, uint64_t busy_below_bytes) {
  std::vector<Admission> plan;
  bool blocked = false;  // first come, first served: nobody passes the head
  uint32_t position = 0;
  std::string head;
  for (const QueuedRequest& job : in_order) {
    GpuPlacement placement = slots.empty() ? GpuPlacement{{}, "the GPUs (none seen: " + read_error + ")"}
                                           : PlaceJob(job.request, slots, busy_below_bytes);
    Admission admission{job.name, {}, 0, {}};
    if (!blocked && !placement.gpus.empty()) {
      for (GpuSlot& slot : slots) {
        if (std::find(placement.gpus.begin(), placement.gpus.end(), slot.index) != placement.gpus.end()) {
          slot.held_by = job.name;
        }
      }
      admission.gpus = std::move(placement.gpus);
      plan.push_back(std::move(admission));
      continue;
    }
    admission.position = ++position;
    admission.waiting_for = placement.gpus.empty() ? placement.waiting_for : "its turn, behind job " + head;
    if (!blocked) head = job.name;
    blocked = true;
    plan.push_back(std::move(admission));
  }
  return plan;
}

}  // namespace gpuctl::train
