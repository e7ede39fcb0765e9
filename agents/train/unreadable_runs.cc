#include "agents/train/unreadable_runs.h"

#include <signal.h>

#include <spdlog/spdlog.h>

namespace gpuctl::train {

UnreadableRuns::UnreadableRuns(JobTable& table, JobLauncher& launcher, RunProcesses& processes, sys::Tmux& tmux)
    : table_(table), launcher_(launcher), processes_(processes), tmux_(tmux) {}

void UnreadableRuns::FindRun(JobEntry& entry) {
  JobRecord& r = entry.record;
  if (r.state != JobState::kUnreadable) return;
  LiveRun live = launcher_.FindLiveRun(r.spec.name);
  if (!live.session.empty()) {
    r.tmux_session = live.session;
    if (!live.run_id.empty()) r.run_id = live.run_id;
    if (live.pane) {
      r.pid = r.pgid = live.pane->pid;
      r.pid_start_time = live.pane->start_time;
    }
  }
  // The run's own cgroup when the session names it, else one that still
  // holds processes.
  for (const std::string& cgroup : live.cgroups) {
    if (cgroup.ends_with("@" + r.run_id)) r.cgroup = cgroup;
  }
  for (const std::string& cgroup : live.cgroups) {
    if (!r.cgroup.empty() || !processes_.cgroups()) break;
    Result<std::vector<int64_t>> procs = processes_.cgroups()->Processes(cgroup);
    if (procs.ok() && !procs->empty()) r.cgroup = cgroup;
  }
  if (!processes_.Remain(r)) return;
  r.state_reason += "; its run " + r.run_id + " is still running" +
                    (r.pid > 0 ? " (pid " + std::to_string(r.pid) + ")" : "") +
                    ": gpuctl train stop " + r.spec.name + " stops it";
  spdlog::warn("job '{}': unreadable record, but its run {} is still running (pid {}, cgroup '{}')", r.spec.name,
               r.run_id, r.pid, r.cgroup);
}

bool UnreadableRuns::StillRuns(const JobRecord& r) {
  return r.state == JobState::kUnreadable && processes_.Remain(r);
}

Result<JobRecord> UnreadableRuns::BeginStop(JobEntry& entry, std::chrono::milliseconds grace) {
  JobRecord& r = entry.record;
  if (!StillRuns(r)) return r;  // nothing runs: nothing to stop
  r.stop_requested = true;
  r.stop_deadline_unix_ms = table_.NowMs() + grace.count();
  entry.kill_sent = false;
  spdlog::info("job '{}' (unreadable record): stopping its run {} (pid {})", r.spec.name, r.run_id, r.pid);
  processes_.Signal(r, SIGTERM);
  Refresh(entry);
  table_.Publish(entry);
  return r;
}

void UnreadableRuns::Refresh(JobEntry& entry) {
  JobRecord& r = entry.record;
  if (r.state != JobState::kUnreadable || !r.stop_requested) return;
  if (r.stop_deadline_unix_ms && table_.NowMs() >= *r.stop_deadline_unix_ms && !entry.kill_sent &&
      processes_.Remain(r)) {
    spdlog::info("job '{}' (unreadable record) still running past its stop deadline: SIGKILL", r.spec.name);
    processes_.Signal(r, SIGKILL);
    entry.kill_sent = true;
  }
  if (processes_.Remain(r)) {
    if (entry.kill_sent) entry.recheck_at = table_.clock().SteadyNow() + std::chrono::milliseconds(50);
    return;
  }
  r.stop_requested = false;
  r.stop_deadline_unix_ms.reset();
  r.state_reason = "its run " + r.run_id + " was stopped; the record is still unreadable: remove it with: gpuctl "
                   "train rm " + r.spec.name;
  if (!r.tmux_session.empty()) (void)tmux_.KillSession(r.tmux_session);
  if (processes_.cgroups() && !r.cgroup.empty()) (void)processes_.cgroups()->RemoveCgroup(r.cgroup);
  spdlog::info("job '{}' (unreadable record): its run {} stopped", r.spec.name, r.run_id);
  table_.Publish(entry);
}

}  // namespace gpuctl::train
