// The supervisor's GPU queue: a job that asks for GPUs (--gpus, --num-gpus,
// --gpu-mem) and cannot have them now is recorded as queued (durable, so
// the queue survives a restart) and admitted in order, higher priority
// first then first come, as soon as a pass of the owner loop finds its GPUs
// free (at most a tick, 250 ms, after they free).
#include <algorithm>
#include <map>

#include <spdlog/spdlog.h>

#include "agents/train/job_supervisor.h"
#include "agents/train/run_id.h"

namespace gpuctl::train {

std::vector<GpuSlot> JobSupervisor::GpuSlots(const sys::GpuReport& report) {
  std::vector<GpuSlot> slots;
  for (const sys::GpuDevice& gpu : report.devices) {
    slots.push_back({gpu.index, gpu.uuid, gpu.memory_total_bytes.value_or(0), gpu.memory_free_bytes.value_or(0), {}, {}});
  }
  // Held: the GPUs a running gpuctl job was given, and those of a run that
  // ended in CUDA OOM and is about to be relaunched on them.
  std::map<int64_t, std::string> job_groups;  // process group -> job
  for (const auto& [name, entry] : entries_) {
    const JobRecord& r = entry->record;
    bool relaunching = r.state == JobState::kFailed && r.spec.oom.recover && !r.oom_decided &&
                       (LogIngest::Behind(r) || std::any_of(r.events.begin(), r.events.end(), [](const auto& e) {
                          return e.event.kind == kCudaOom;
                        }));
    if (!IsActive(r.state) && !relaunching) continue;
    if (r.pgid > 0 && IsActive(r.state)) job_groups[r.pgid] = name;
    if (r.inner_pgid > 0 && IsActive(r.state)) job_groups[r.inner_pgid] = name;
    if (r.spec.gpus.empty()) continue;
    Result<std::vector<uint32_t>> held = ResolveGpus(SplitGpuList(r.spec.gpus), slots);
    if (!held.ok()) continue;
    for (GpuSlot& slot : slots) {
      if (std::find(held->begin(), held->end(), slot.index) != held->end() && slot.held_by.empty()) slot.held_by = name;
    }
  }
  // A running job's processes hold the GPU they are on (a job started
  // without --gpus sees them all); others' live processes are foreign (a
  // reading may still list the processes of a job that just ended).
  for (size_t i = 0; i < report.devices.size(); ++i) {
    for (const sys::GpuProcessInfo& p : report.devices[i].processes) {
      if (!processes_.Alive(p.pid)) continue;
      std::optional<int64_t> group = processes_.ProcessGroup(p.pid);
      auto job = group ? job_groups.find(*group) : job_groups.end();
      if (job != job_groups.end()) {
        if (slots[i].held_by.empty()) slots[i].held_by = job->second;
        continue;
      }
      slots[i].foreign.push_back({p.pid, p.used_memory_bytes});
    }
  }
  return slots;
}

Result<JobRecord> JobSupervisor::Enqueue(JobSpec spec, Lineage lineage, std::string waiting_for,
                                        uint32_t restarts) {
  JobRecord record;
  record.restart_count = restarts;
  record.spec = std::move(spec);
  record.run_id = NewRunId(clock_.WallNow());
  record.state = JobState::kQueued;
  record.state_reason = "queued";
  record.tmux_session = TmuxSessionName(record.spec.name);
  record.created_unix_ms = NowMs();
  record.queued_unix_ms = record.created_unix_ms;
  record.waiting_for = std::move(waiting_for);
  record.attempts = std::move(lineage.attempts);
  record.hold_step = lineage.hold_step;
  const std::string name = record.spec.name;
  Status saved = store_.Prepare(name);
  if (saved.ok()) saved = store_.Save(record);
  if (!saved.ok()) {
    return Status(saved.code(), "cannot record job '" + name + "', so it was not queued: " + saved.message());
  }
  Entry& entry = Put(std::move(record));
  spdlog::info("job '{}' queued: waiting for {}", name, entry.record.waiting_for);
  PublishEvent("job_queued", entry.record, "waiting for " + entry.record.waiting_for,
               {{"waiting_for", entry.record.waiting_for}, {"priority", entry.record.spec.priority}});
  next_admission_ = {};
  AdmitQueued();  // its place in the queue, and it may go at once behind nobody
  const JobRecord& now = entries_.at(name)->record;
  if (now.state == JobState::kFailed) return FailedPrecondition("job '" + name + "' " + now.state_reason);
  return now;
}

void JobSupervisor::FailQueued(const std::string& name, const std::string& why) {
  auto it = entries_.find(name);
  if (it == entries_.end() || it->second->record.state != JobState::kQueued) return;  // DoStart recorded it
  Entry& entry = *it->second;
  JobRecord& r = entry.record;
  spdlog::error("job '{}' could not start from the queue: {}", name, why);
  r.state = JobState::kFailed;
  r.state_reason = "could not start from the queue: " + why;
  r.ended_unix_ms = NowMs();
  (void)Save(entry);
  Publish(entry);
  PublishEvent("job_ended", r, "failed: " + r.state_reason, {{"state", "failed"}, {"exit_code", nullptr}});
}

void JobSupervisor::AdmitQueued() {
  std::vector<QueuedJob> waiting;
  for (const auto& [name, entry] : entries_) {
    const JobRecord& r = entry->record;
    if (r.state == JobState::kQueued) waiting.push_back({name, r.spec.priority, r.queued_unix_ms});
  }
  if (waiting.empty()) return;
  const auto now = clock_.SteadyNow();
  if (now < next_admission_) return;
  next_admission_ = now + kAdmitInterval;
  const sys::GpuReport report = options_.read_gpus ? options_.read_gpus() : sys::GpuReport{};
  std::vector<GpuSlot> slots = GpuSlots(report);
  bool blocked = false;  // first come, first served: nobody passes the head
  uint32_t position = 0;
  std::string head;
  for (const std::string& name : QueueOrder(waiting)) {
    Entry& entry = *entries_.at(name);
    JobRecord& r = entry.record;
    GpuRequest request{r.spec.num_gpus, SplitGpuList(r.spec.gpus), r.spec.gpu_mem_bytes};
    GpuPlacement placement = slots.empty() ? GpuPlacement{{}, "the GPUs (none seen: " + report.error + ")"}
                                        : PlaceJob(request, slots, options_.gpu_busy_below_bytes);
    if (!blocked && !placement.gpus.empty()) {
      JobSpec spec = r.spec;
      if (spec.gpus.empty()) spec.gpus = VisibleDevices(placement.gpus);
      for (GpuSlot& slot : slots) {
        if (std::find(placement.gpus.begin(), placement.gpus.end(), slot.index) != placement.gpus.end()) {
          slot.held_by = name;
        }
      }
      spdlog::info("job '{}' admitted from the queue onto GPUs {}", name, VisibleDevices(placement.gpus));
      Lineage lineage{r.attempts, r.hold_step};
      // DoStart replaces this entry: nothing of it is used after this line.
      Result<JobRecord> started = DoStart(std::move(spec), std::move(lineage), /*admitted=*/true);
      if (!started.ok()) FailQueued(name, started.status().message());
      continue;
    }
    ++position;
    std::string waiting_for = placement.gpus.empty() ? placement.waiting_for : "its turn, behind job " + head;
    if (!blocked) head = name;
    blocked = true;
    if (r.queue_position != position || r.waiting_for != waiting_for) {
      bool reason_changed = r.waiting_for != waiting_for;
      r.queue_position = position;
      r.waiting_for = waiting_for;
      if (reason_changed) (void)Save(entry);
      Publish(entry);
    }
  }
}

}  // namespace gpuctl::train
