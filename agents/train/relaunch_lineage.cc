#include "agents/train/relaunch_lineage.h"

#include "agents/sys/files.h"

namespace gpuctl::train {

Lineage EndAttempt(JobRecord& r, std::vector<std::string> changes) {
  AttemptRecord ended;
  ended.attempt = r.spec.attempt;
  ended.run_id = r.run_id;
  ended.alloc_conf = r.spec.alloc_conf;
  ended.command = EffectiveCommand(r.spec);
  ended.state = r.state;
  ended.state_reason = r.state_reason;
  ended.step = r.metrics.step;
  ended.best_throughput = r.metrics.best_throughput;
  ended.started_unix_ms = r.started_unix_ms;
  ended.ended_unix_ms = r.ended_unix_ms;
  ended.changes = std::move(changes);
  ended.resumed_from = r.spec.resume_from;
  ended.events = r.events.size() + r.events_dropped;
  ended.log_path = r.log_path;
  if (!r.log_path.empty() && sys::PathExists(r.log_path)) {
    std::string kept = r.log_path + "." + r.run_id;
    if (sys::RenameFile(r.log_path, kept).ok()) {
      ended.log_path = kept;
      r.log_path = kept;  // where this run's log is now, should the relaunch not start
    }
  }
  Lineage lineage{r.attempts, r.metrics.step};
  lineage.attempts.push_back(std::move(ended));
  return lineage;
}

std::optional<sys::Checkpoint> ResumePoint(const JobSpec& spec, int64_t now_unix_ms) {
  if (spec.checkpoint.dir.empty()) return std::nullopt;
  sys::CheckpointScanOptions scan;
  scan.dir = spec.checkpoint.dir;
  scan.complete_marker = spec.checkpoint.complete_marker;
  scan.now_unix_ms = now_unix_ms;
  return sys::FindLatestCompleteCheckpoint(scan);
}

void ResumeFrom(JobSpec& next, const std::optional<sys::Checkpoint>& checkpoint, std::vector<std::string>& changes) {
  if (next.checkpoint.dir.empty()) return;
  next.resume_from = checkpoint ? checkpoint->path : std::string();
  if (checkpoint) {
    changes.push_back("resume from " + checkpoint->path);
  } else {
    changes.push_back("no complete checkpoint in " + next.checkpoint.dir + ": from scratch");
  }
}

}  // namespace gpuctl::train
