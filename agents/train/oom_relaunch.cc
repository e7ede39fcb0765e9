#include "agents/train/oom_relaunch.h"

#include <algorithm>

#include <spdlog/spdlog.h>

#include "agents/sys/files.h"
#include "agents/sys/text_fields.h"
#include "agents/train/oom_remediation.h"
#include "agents/train/relaunch_lineage.h"
#include "common/event_kinds.h"

namespace gpuctl::train {
namespace {

std::vector<LogEvent> OomsOf(const JobRecord& record) {
  std::vector<LogEvent> ooms;
  for (const JobEventRecord& e : record.events) {
    if (e.event.kind == kCudaOom) ooms.push_back(e.event);
  }
  return ooms;
}

// Every OOM'd GPU with its figures, for the event.
nlohmann::json GpusJson(const std::vector<LogEvent>& ooms) {
  nlohmann::json gpus = nlohmann::json::array();
  for (const LogEvent& oom : ooms) {
    nlohmann::json g = nlohmann::json::object();
    auto put = [&](const char* key, const auto& value) {
      if (value) g[key] = *value;
    };
    put("gpu", oom.gpu);
    put("rank", oom.rank);
    put("tried_bytes", oom.tried_bytes);
    put("free_bytes", oom.free_bytes);
    put("total_bytes", oom.total_bytes);
    put("reserved_unallocated_bytes", oom.reserved_unallocated_bytes);
    g["fragmentation"] = IsFragmentation(oom);
    gpus.push_back(std::move(g));
  }
  return gpus;
}

bool DueADecision(const JobRecord& r) {
  if (!r.spec.oom.recover || r.oom_decided || r.state != JobState::kFailed || r.stop_requested) return false;
  if (LogIngest::Behind(r)) return false;  // the OOM may be in lines not read yet
  return !OomsOf(r).empty();
}

}  // namespace

OomRelaunch::OomRelaunch(JobStarter& starter) : starter_(starter) {}

bool OomRelaunch::Pending(const JobRecord& r) {
  return r.state == JobState::kFailed && r.spec.oom.recover && !r.oom_decided &&
         (LogIngest::Behind(r) ||
          std::any_of(r.events.begin(), r.events.end(), [](const auto& e) { return e.event.kind == kCudaOom; }));
}

void OomRelaunch::Tick(JobTable& table, TimePoint /*now*/) {
  std::vector<std::string> due;
  table.ForEach([&](const JobEntry& entry) {
    if (DueADecision(entry.record)) due.push_back(entry.record.spec.name);
  });
  // Each may replace its own entry, never another.
  for (const std::string& name : due) {
    if (JobEntry* entry = table.Find(name)) Remediate(table, *entry);
  }
}

bool OomRelaunch::OnRefresh(JobTable& table, JobEntry& entry, int64_t /*now_unix_ms*/) {
  JobRecord& r = entry.record;
  // A relaunched run past the step its last attempt reached: the change held.
  if (!r.hold_step || !r.metrics.step || *r.metrics.step <= *r.hold_step) return false;
  table.PublishEvent(event_kind::kOomRemediationHeld, r,
                     "attempt " + std::to_string(r.spec.attempt) + " passed step " + std::to_string(*r.hold_step) +
                         ", where the last attempt ended",
                     {{"attempt", r.spec.attempt}, {"step", *r.metrics.step}, {"last_attempt_step", *r.hold_step}});
  r.hold_step.reset();
  return true;
}

void OomRelaunch::Remediate(JobTable& table, JobEntry& entry) {
  JobRecord& r = entry.record;
  const std::vector<LogEvent> ooms = OomsOf(r);
  const OomDecision decision = DecideOomRemediation(r.spec, ooms);
  nlohmann::json fields = {{"attempt", r.spec.attempt},
                           {"gpus", GpusJson(ooms)},
                           {"changes", decision.changes},
                           {"reason", decision.reason},
                           {"fragmentation", decision.fragmentation}};
  // How close the run came before it died: its GPUs' peaks (from NVML).
  nlohmann::json peaks = nlohmann::json::array();
  for (const JobGpuMemory& m : r.gpu_memory) {
    peaks.push_back({{"gpu", m.index}, {"peak_bytes", m.peak_bytes}, {"total_bytes", m.total_bytes}});
  }
  fields["gpu_memory_peaks"] = peaks;
  if (!decision.relaunch) {
    r.oom_decided = true;
    r.state_reason += "; OOM remediation gave up: " + decision.reason;
    (void)table.Save(entry);
    table.Publish(entry);
    spdlog::warn("job '{}' (run {}): OOM remediation gave up: {}", r.spec.name, r.run_id, decision.reason);
    table.PublishEvent(event_kind::kOomGaveUp, r,
                       "gave up after attempt " + std::to_string(r.spec.attempt) + ": " + decision.reason, fields);
    return;
  }

  JobSpec next = ApplyOomDecision(r.spec, decision);
  std::vector<std::string> changes = decision.changes;
  ResumeFrom(next, ResumePoint(r.spec, table.NowMs()), changes);
  // The attempt that ended, for the lineage, with its own log kept aside.
  Lineage lineage = EndAttempt(r, changes);
  fields["next_attempt"] = next.attempt;
  fields["resume_from"] = next.resume_from.empty() ? nlohmann::json(nullptr) : nlohmann::json(next.resume_from);
  spdlog::info("job '{}' (run {}): CUDA OOM, relaunching as attempt {}: {} ({})", r.spec.name, r.run_id,
               next.attempt, sys::Join(decision.changes, ", "), decision.reason);
  table.PublishEvent(event_kind::kOomRemediation, r,
                     "attempt " + std::to_string(next.attempt) + ": " + sys::Join(decision.changes, ", ") + " (" +
                         decision.reason + ")",
                     fields);
  const std::string name = r.spec.name;
  // Decided, in memory only: a relaunch that cannot start is not retried in
  // a loop, and an agent killed before the new run's record is saved decides
  // again at its next start.
  r.oom_decided = true;
  // The start replaces this entry: nothing of it is used after this line.
  Result<JobRecord> started = starter_.StartRun(std::move(next), std::move(lineage), /*admitted=*/true);
  if (!started.ok()) spdlog::error("job '{}': the OOM relaunch did not start: {}", name, started.status().message());
}

}  // namespace gpuctl::train
