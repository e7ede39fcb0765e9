#include "agents/train/checkpoint_relaunch.h"

#include <algorithm>

#include <spdlog/spdlog.h>

#include "agents/sys/text_fields.h"
#include "agents/train/relaunch_lineage.h"
#include "common/event_kinds.h"

namespace gpuctl::train {
namespace {

bool HasOom(const JobRecord& r) {
  return std::any_of(r.events.begin(), r.events.end(), [](const auto& e) { return e.event.kind == event_kind::kCudaOom; });
}

// A failed run this part relaunches, whether or not its log is read yet.
bool Ours(const JobRecord& r) {
  if (r.relaunch_decided || r.state != JobState::kFailed) return false;
  if (r.relaunch_after_stop) return true;  // a hang's stop under --on-hang recover
  if (r.stop_requested || r.spec.on_fail != OnFail::kRecover) return false;
  return !HasOom(r) && !r.oom_decided;  // a CUDA OOM is the OOM policy's
}

}  // namespace

CheckpointRelaunch::CheckpointRelaunch(JobStarter& starter) : starter_(starter) {}

bool CheckpointRelaunch::Pending(const JobRecord& r) { return Ours(r); }

void CheckpointRelaunch::Tick(JobTable& table, TimePoint /*now*/) {
  std::vector<std::string> due;
  table.ForEach([&](const JobEntry& entry) {
    // The whole log first: an OOM in its last lines is the OOM policy's.
    if (Ours(entry.record) && !LogIngest::Behind(entry.record)) due.push_back(entry.record.spec.name);
  });
  for (const std::string& name : due) {
    if (JobEntry* entry = table.Find(name)) Relaunch(table, *entry);
  }
}

void CheckpointRelaunch::Relaunch(JobTable& table, JobEntry& entry) {
  JobRecord& r = entry.record;
  const std::string cause =
      r.relaunch_after_stop ? (r.agent_stop_cause.empty() ? std::string("hang") : r.agent_stop_cause) : "failure";
  std::optional<sys::Checkpoint> checkpoint = ResumePoint(r.spec, table.NowMs());
  // A relaunch that left no newer checkpoint than it started from made no
  // progress; the first run is no relaunch.
  const bool newer = checkpoint && checkpoint->path != r.spec.resume_from;
  const uint32_t without_progress = r.spec.attempt > 1 && !newer ? r.restarts_without_progress + 1 : 0;
  const uint32_t limit = r.spec.checkpoint.max_restarts_without_progress;
  nlohmann::json fields = {{"attempt", r.spec.attempt},
                           {"cause", cause},
                           {"reason", r.state_reason},
                           {"checkpoint", checkpoint ? nlohmann::json(checkpoint->path) : nlohmann::json(nullptr)},
                           {"restarts_without_progress", without_progress},
                           {"max_restarts_without_progress", limit}};
  r.relaunch_decided = true;
  if (without_progress >= limit && r.spec.attempt > 1) {
    std::string why = std::to_string(without_progress) + " relaunch" + (without_progress == 1 ? "" : "es") +
                      " in a row left no newer checkpoint (--max-restarts-without-progress " + std::to_string(limit) +
                      ")";
    r.state_reason += "; gave up relaunching: " + why;
    (void)table.Save(entry);
    table.Publish(entry);
    spdlog::warn("job '{}' (run {}): gave up relaunching: {}", r.spec.name, r.run_id, why);
    table.PublishEvent(event_kind::kJobGaveUp, r, "gave up after attempt " + std::to_string(r.spec.attempt) + ": " + why,
                       fields);
    return;
  }
  JobSpec next = r.spec;
  next.attempt = r.spec.attempt + 1;
  std::vector<std::string> changes;
  ResumeFrom(next, checkpoint, changes);
  // After a GPU fault, other GPUs: a job the agent placed (--num-gpus) is
  // placed again, past the drained one; one that named its GPUs waits for
  // them (queued, the drain named) rather than start on a faulted one.
  const bool replace = cause == "gpu_fault";
  if (replace && next.num_gpus > 0) {
    changes.push_back("GPUs placed again, past the drained one (were " + next.gpus + ")");
    next.gpus.clear();
  }
  Lineage lineage = EndAttempt(r, changes);
  lineage.hold_step.reset();
  lineage.restarts_without_progress = without_progress;
  fields["next_attempt"] = next.attempt;
  const std::string message = "attempt " + std::to_string(next.attempt) + " after a " + cause + ": " +
                              (changes.empty() ? std::string("as before") : sys::Join(changes, ", "));
  spdlog::info("job '{}' (run {}): relaunching: {}", r.spec.name, r.run_id, message);
  table.PublishEvent(event_kind::kJobRelaunched, r, message, fields);
  const std::string name = r.spec.name;
  // The start replaces this entry: nothing of it is used after this line.
  Result<JobRecord> started = starter_.StartRun(std::move(next), std::move(lineage), /*admitted=*/!replace);
  if (!started.ok()) spdlog::error("job '{}': the relaunch did not start: {}", name, started.status().message());
}

}  // namespace gpuctl::train
