// Jobs whose record cannot be read. The record is never rewritten (it is the
// evidence of what went wrong), but what of the job still runs is found by
// its names alone, so that `train stop` stops it (signals, the grace, then
// SIGKILL, all kept in memory) and `train rm` refuses while it lives
// instead of deleting a live job's log.
#include <signal.h>

#include <spdlog/spdlog.h>

#include "agents/train/job_supervisor.h"

namespace gpuctl::train {

void JobSupervisor::FindUnreadableRun(Entry& entry) {
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
    if (!r.cgroup.empty() || !options_.cgroups) break;
    Result<std::vector<int64_t>> procs = options_.cgroups->Processes(cgroup);
    if (procs.ok() && !procs->empty()) r.cgroup = cgroup;
  }
  if (!ProcessesRemain(r)) return;
  r.state_reason += "; its run " + r.run_id + " is still running" +
                    (r.pid > 0 ? " (pid " + std::to_string(r.pid) + ")" : "") +
                    ": gpuctl train stop " + r.spec.name + " stops it";
  spdlog::warn("job '{}': unreadable record, but its run {} is still running (pid {}, cgroup '{}')", r.spec.name,
               r.run_id, r.pid, r.cgroup);
}

bool JobSupervisor::UnreadableStillRuns(const JobRecord& r) {
  return r.state == JobState::kUnreadable && ProcessesRemain(r);
}

Result<JobRecord> JobSupervisor::BeginStopUnreadable(Entry& entry, std::chrono::milliseconds grace) {
  JobRecord& r = entry.record;
  if (!UnreadableStillRuns(r)) return r;  // nothing runs: nothing to stop
  r.stop_requested = true;
  r.stop_deadline_unix_ms = NowMs() + grace.count();
  entry.kill_sent = false;
  spdlog::info("job '{}' (unreadable record): stopping its run {} (pid {})", r.spec.name, r.run_id, r.pid);
  SignalJob(r, SIGTERM);
  RefreshUnreadable(entry);
  Publish(entry);
  return r;
}

void JobSupervisor::RefreshUnreadable(Entry& entry) {
  JobRecord& r = entry.record;
  if (r.state != JobState::kUnreadable || !r.stop_requested) return;
  if (r.stop_deadline_unix_ms && NowMs() >= *r.stop_deadline_unix_ms && !entry.kill_sent && ProcessesRemain(r)) {
    spdlog::info("job '{}' (unreadable record) still running past its stop deadline: SIGKILL", r.spec.name);
    SignalJob(r, SIGKILL);
    entry.kill_sent = true;
  }
  if (ProcessesRemain(r)) {
    if (entry.kill_sent) entry.recheck_at = clock_.SteadyNow() + std::chrono::milliseconds(50);
    return;
  }
  r.stop_requested = false;
  r.stop_deadline_unix_ms.reset();
  r.state_reason = "its run " + r.run_id + " was stopped; the record is still unreadable: remove it with: gpuctl "
                   "train rm " + r.spec.name;
  if (!r.tmux_session.empty()) (void)tmux_.KillSession(r.tmux_session);
  if (options_.cgroups && !r.cgroup.empty()) (void)options_.cgroups->RemoveCgroup(r.cgroup);
  spdlog::info("job '{}' (unreadable record): its run {} stopped", r.spec.name, r.run_id);
  Publish(entry);
}

}  // namespace gpuctl::train
