#include "agents/train/gpu_queue.h"

#include "agents/train/checkpoint_relaunch.h"

#include <map>

#include <spdlog/spdlog.h>

#include "agents/train/gpu_owners.h"
#include "agents/train/job_end.h"
#include "agents/train/oom_relaunch.h"
#include "agents/train/run_id.h"
#include "common/event_kinds.h"

namespace gpuctl::train {

GpuQueue::GpuQueue(JobTable& table, std::function<sys::GpuReport()> read_gpus, uint64_t busy_below_bytes,
                   sys::ProcessControl& processes, JobStarter& starter)
    : table_(table),
      read_gpus_(std::move(read_gpus)),
      busy_below_bytes_(busy_below_bytes),
      processes_(processes),
      starter_(starter) {}

std::vector<GpuSlot> GpuQueue::Slots(const sys::GpuReport& report) {
  // Held: the GPUs a running gpuctl job was given, and those of a run that
  // ended in CUDA OOM and is about to be relaunched on them. A job's own
  // memory on each GPU, where the reading lists no processes to count.
  std::map<uint32_t, std::string> held;
  std::map<uint32_t, uint64_t> job_bytes;
  std::vector<GpuSlot> indices;  // just the indices and uuids, to resolve --gpus
  for (const sys::GpuDevice& gpu : report.devices) indices.push_back({gpu.index, gpu.uuid, 0, 0, {}, {}, {}});
  table_.ForEach([&](const JobEntry& entry) {
    const JobRecord& r = entry.record;
    if (!IsActive(r.state) && !OomRelaunch::Pending(r) && !CheckpointRelaunch::Pending(r)) return;
    if (IsActive(r.state)) {
      for (const JobGpuMemory& m : r.gpu_memory) job_bytes[m.index] += m.used_bytes;
    }
    if (r.spec.gpus.empty()) return;
    Result<std::vector<uint32_t>> given = ResolveGpus(SplitGpuList(r.spec.gpus), indices);
    if (!given.ok()) return;
    for (uint32_t index : *given) held.try_emplace(index, r.spec.name);
  });
  return GpuSlotsFromReport(report, held, GpuOwnersOf(table_, processes_),
                            [this](uint32_t pid) { return processes_.Alive(pid); }, job_bytes);
}

std::optional<Result<JobRecord>> GpuQueue::Place(JobSpec& spec, Lineage& lineage, uint32_t restarts) {
  if (!read_gpus_ || (spec.num_gpus == 0 && !spec.gpu_mem_bytes && spec.gpus.empty())) return std::nullopt;
  const sys::GpuReport report = read_gpus_();
  GpuRequest request{spec.num_gpus, {}, spec.gpu_mem_bytes};
  if (!spec.gpus.empty()) request.gpus = SplitGpuList(spec.gpus);
  uint32_t ahead = 0;
  table_.ForEach([&](const JobEntry& entry) {
    const JobRecord& q = entry.record;
    if (q.state == JobState::kQueued && q.spec.name != spec.name && q.spec.priority >= spec.priority) ++ahead;
  });
  StartPlacement decided = DecideStartPlacement(request, Slots(report), report.error, ahead, busy_below_bytes_);
  switch (decided.kind) {
    case StartPlacement::Kind::kRefuse:
      return Result<JobRecord>(decided.refusal);
    case StartPlacement::Kind::kQueue:
      return Enqueue(std::move(spec), std::move(lineage), decided.waiting_for, restarts);
    case StartPlacement::Kind::kStart:
      if (spec.gpus.empty() && !decided.gpus.empty()) spec.gpus = VisibleDevices(decided.gpus);
      return std::nullopt;
  }
  return std::nullopt;
}

Result<JobRecord> GpuQueue::Enqueue(JobSpec spec, Lineage lineage, std::string waiting_for, uint32_t restarts) {
  JobRecord record;
  record.restart_count = restarts;
  record.spec = std::move(spec);
  record.run_id = NewRunId(table_.clock().WallNow());
  record.state = JobState::kQueued;
  record.state_reason = "queued";
  record.tmux_session = TmuxSessionName(record.spec.name);
  record.created_unix_ms = table_.NowMs();
  record.queued_unix_ms = record.created_unix_ms;
  record.waiting_for = std::move(waiting_for);
  record.attempts = std::move(lineage.attempts);
  record.hold_step = lineage.hold_step;
  const std::string name = record.spec.name;
  Status saved = table_.store().Prepare(name);
  if (saved.ok()) saved = table_.store().Save(record);
  if (!saved.ok()) {
    return Status(saved.code(), "cannot record job '" + name + "', so it was not queued: " + saved.message());
  }
  JobEntry& entry = table_.Put(std::move(record));
  spdlog::info("job '{}' queued: waiting for {}", name, entry.record.waiting_for);
  table_.PublishEvent(event_kind::kJobQueued, entry.record, "waiting for " + entry.record.waiting_for,
                      {{"waiting_for", entry.record.waiting_for}, {"priority", entry.record.spec.priority}});
  next_admission_ = {};
  Tick(table_, table_.clock().SteadyNow());  // its place in the queue, and it may go at once behind nobody
  const JobRecord& now = table_.Find(name)->record;
  if (now.state == JobState::kFailed) return FailedPrecondition("job '" + name + "' " + now.state_reason);
  return now;
}

void GpuQueue::FailQueued(const std::string& name, const std::string& why) {
  JobEntry* entry = table_.Find(name);
  if (!entry || entry->record.state != JobState::kQueued) return;  // the start recorded it
  JobRecord& r = entry->record;
  spdlog::error("job '{}' could not start from the queue: {}", name, why);
  r.state = JobState::kFailed;
  r.state_reason = "could not start from the queue: " + why;
  r.ended_unix_ms = table_.NowMs();
  (void)table_.Save(*entry);
  table_.Publish(*entry);
  JobEndedEvent ended = JobEnded(r);
  table_.PublishEvent(ended.kind, r, ended.message, std::move(ended.fields));
}

void GpuQueue::Tick(JobTable& table, TimePoint now) {
  std::vector<QueuedJob> waiting;
  table.ForEach([&](const JobEntry& entry) {
    const JobRecord& r = entry.record;
    if (r.state == JobState::kQueued) waiting.push_back({r.spec.name, r.spec.priority, r.queued_unix_ms});
  });
  if (waiting.empty()) return;
  if (now < next_admission_) return;
  next_admission_ = now + kAdmitInterval;
  const sys::GpuReport report = read_gpus_ ? read_gpus_() : sys::GpuReport{};
  std::vector<QueuedRequest> in_order;
  for (const std::string& name : QueueOrder(waiting)) {
    const JobSpec& spec = table.Find(name)->record.spec;
    in_order.push_back({name, {spec.num_gpus, SplitGpuList(spec.gpus), spec.gpu_mem_bytes}});
  }
  for (const Admission& admission : PlanAdmissions(in_order, Slots(report), report.error, busy_below_bytes_)) {
    const std::string& name = admission.name;
    JobEntry& entry = *table.Find(name);
    JobRecord& r = entry.record;
    if (!admission.gpus.empty()) {
      JobSpec spec = r.spec;
      if (spec.gpus.empty()) spec.gpus = VisibleDevices(admission.gpus);
      spdlog::info("job '{}' admitted from the queue onto GPUs {}", name, VisibleDevices(admission.gpus));
      Lineage lineage{r.attempts, r.hold_step};
      // The start replaces this entry: nothing of it is used after this line.
      Result<JobRecord> started = starter_.StartRun(std::move(spec), std::move(lineage), /*admitted=*/true);
      if (!started.ok()) FailQueued(name, started.status().message());
      continue;
    }
    if (r.queue_position != admission.position || r.waiting_for != admission.waiting_for) {
      bool reason_changed = r.waiting_for != admission.waiting_for;
      r.queue_position = admission.position;
      r.waiting_for = admission.waiting_for;
      if (reason_changed) (void)table.Save(entry);
      table.Publish(entry);
    }
  }
}

}  // namespace gpuctl::train
