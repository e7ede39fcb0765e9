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
  // Held: the GPUs a running gpuctl job was given, and those of a run that
  // ended in CUDA OOM and is about to be relaunched on them. A job's own
  // memory on each GPU, where the reading lists no processes to count.
  std::map<uint32_t, std::string> held;
  std::map<uint32_t, uint64_t> job_bytes;
  std::vector<GpuSlot> indices;  // just the indices and uuids, to resolve --gpus
  for (const sys::GpuDevice& gpu : report.devices) indices.push_back({gpu.index, gpu.uuid, 0, 0, {}, {}});
  for (const auto& [name, entry] : entries_) {
    const JobRecord& r = entry->record;
    bool relaunching = r.state == JobState::kFailed && r.spec.oom.recover && !r.oom_decided &&
                       (LogIngest::Behind(r) || std::any_of(r.events.begin(), r.events.end(), [](const auto& e) {
                          return e.event.kind == kCudaOom;
                        }));
    if (!IsActive(r.state) && !relaunching) continue;
    if (IsActive(r.state)) {
      for (const JobGpuMemory& m : r.gpu_memory) job_bytes[m.index] += m.used_bytes;
    }
    if (r.spec.gpus.empty()) continue;
    Result<std::vector<uint32_t>> given = ResolveGpus(SplitGpuList(r.spec.gpus), indices);
    if (!given.ok()) continue;
    for (uint32_t index : *given) held.try_emplace(index, name);
  }
  return GpuSlotsFromReport(report, held, GpuOwners(), [this](uint32_t pid) { return processes_.Alive(pid); },
                            job_bytes);
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
  std::vector<QueuedRequest> in_order;
  for (const std::string& name : QueueOrder(waiting)) {
    const JobSpec& spec = entries_.at(name)->record.spec;
    in_order.push_back({name, {spec.num_gpus, SplitGpuList(spec.gpus), spec.gpu_mem_bytes}});
  }
  for (const Admission& admission :
       PlanAdmissions(in_order, GpuSlots(report), report.error, options_.gpu_busy_below_bytes)) {
    const std::string& name = admission.name;
    Entry& entry = *entries_.at(name);
    JobRecord& r = entry.record;
    if (!admission.gpus.empty()) {
      JobSpec spec = r.spec;
      if (spec.gpus.empty()) spec.gpus = VisibleDevices(admission.gpus);
      spdlog::info("job '{}' admitted from the queue onto GPUs {}", name, VisibleDevices(admission.gpus));
      Lineage lineage{r.attempts, r.hold_step};
      // DoStart replaces this entry: nothing of it is used after this line.
      Result<JobRecord> started = DoStart(std::move(spec), std::move(lineage), /*admitted=*/true);
      if (!started.ok()) FailQueued(name, started.status().message());
      continue;
    }
    if (r.queue_position != admission.position || r.waiting_for != admission.waiting_for) {
      bool reason_changed = r.waiting_for != admission.waiting_for;
      r.queue_position = admission.position;
      r.waiting_for = admission.waiting_for;
      if (reason_changed) (void)Save(entry);
      Publish(entry);
    }
  }
}

}  // namespace gpuctl::train
