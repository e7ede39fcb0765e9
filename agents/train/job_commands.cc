#include "agents/train/job_commands.h"

#include <signal.h>

#include <set>

#include <spdlog/spdlog.h>

#include "agents/train/job_end.h"
#include "agents/train/removal_check.h"
#include "agents/train/run_id.h"
#include "common/event_kinds.h"

namespace gpuctl::train {

JobCommands::JobCommands(JobTable& table, JobLauncher& launcher, RunMonitor& monitor, GpuQueue& queue,
                         UnreadableRuns& unreadable, RunProcesses& processes, GuardView& guard,
                         std::string default_cwd)
    : table_(table),
      launcher_(launcher),
      monitor_(monitor),
      queue_(queue),
      unreadable_(unreadable),
      processes_(processes),
      guard_(guard),
      default_cwd_(std::move(default_cwd)) {}

Result<JobRecord> JobCommands::StartRun(JobSpec spec, Lineage lineage, bool admitted) {
  const std::string name = spec.name;
  if (spec.cwd.empty()) spec.cwd = spec.container.empty() ? default_cwd_ : launcher_.DefaultContainerCwd(spec.container);
  JobEntry* existing = table_.Find(name);
  uint32_t restarts = 0;
  if (existing) {
    JobEntry& old = *existing;
    monitor_.Refresh(old, 0);
    if (old.record.state == JobState::kUnreadable) {
      return Status(ErrorCode::kAlreadyExists, "job '" + name + "' has an unreadable record (" +
                                                   old.record.state_reason + ")");
    }
    if (IsActive(old.record.state)) {
      return Status(ErrorCode::kAlreadyExists, "job '" + name + "' is already running (pid " +
                                                   std::to_string(old.record.pid) + "); stop it with 'gpuctl train stop " +
                                                   name + "' or choose another --name");
    }
    if (old.record.state == JobState::kQueued && !admitted) {
      return Status(ErrorCode::kAlreadyExists, "job '" + name + "' is queued (waiting for " + old.record.waiting_for +
                                                   "); cancel it with 'gpuctl train stop " + name +
                                                   "' or choose another --name");
    }
    restarts = old.record.restart_count + (old.record.state == JobState::kQueued ? 0 : 1);
  }
  // What the launch would refuse (script, cwd, container) is refused now,
  // not when a queued job's turn comes.
  std::string run_id = NewRunId(table_.clock().WallNow());
  Result<Placement> placement = launcher_.Plan(spec, run_id);
  if (!placement.ok()) return placement.status();
  if (!admitted) {
    if (std::optional<Result<JobRecord>> answered = queue_.Place(spec, lineage, restarts)) return *answered;
  }

  // The record first, durable, before anything of the run exists: an agent
  // killed from here on finds the run at its next start.
  JobRecord record;
  record.spec = spec;
  record.run_id = run_id;
  record.state = JobState::kStarting;
  record.state_reason = "starting";
  record.tmux_session = TmuxSessionName(name);
  record.created_unix_ms = table_.NowMs();
  record.restart_count = restarts;
  record.log_path = placement->log_path;
  record.exit_path = placement->exit_path;
  record.cgroup = placement->cgroup;
  record.pid_path = placement->pid_path;
  record.cgroup_gate = placement->cgroup_gate;
  record.run_command = placement->run_command;
  record.run_env = placement->env.set_by_gpuctl;
  record.attempts = std::move(lineage.attempts);
  record.hold_step = lineage.hold_step;
  record.restarts_without_progress = lineage.restarts_without_progress;
  Status saved = table_.store().Prepare(name);
  if (saved.ok()) saved = table_.store().Save(record);
  if (!saved.ok()) {
    return Status(saved.code(), "cannot record job '" + name + "', so it was not started: " + saved.message());
  }
  const bool rerun = existing != nullptr;
  std::set<uint32_t> previous_gpu_pids;
  int64_t previous_ended = 0;
  if (rerun) {
    previous_gpu_pids = existing->gpu_pids;
    previous_ended = existing->record.ended_unix_ms;
  }
  JobEntry& entry = table_.Put(std::move(record));  // `existing` is gone from here on
  entry.previous_gpu_pids = std::move(previous_gpu_pids);
  entry.previous_ended_unix_ms = previous_ended;
  JobRecord& r = entry.record;
  table_.Publish(entry);

  auto fail_start = [&](const Status& why) -> Status {
    r.state = JobState::kFailed;
    r.state_reason = "could not start: " + why.message();
    r.ended_unix_ms = table_.NowMs();
    (void)table_.Save(entry);
    table_.Publish(entry);
    return why;
  };
  if (Status s = launcher_.Prepare(spec, *placement, rerun); !s.ok()) return fail_start(s);
  if (Status s = launcher_.Launch(spec, *placement, run_id); !s.ok()) return fail_start(s);
  r.started_unix_ms = table_.NowMs();
  Result<Pane> pane = launcher_.FindPane(r.tmux_session);
  if (pane.ok()) {
    r.pid = pane->pid;
    // tmux makes the pane lead its own group, but may not have done so yet
    // when it reports the pid: the pid itself is the group to signal.
    r.pgid = pane->pid;
    r.pid_start_time = pane->start_time;
    r.state = JobState::kRunning;
    r.state_reason = "running";
  }  // else it ended before tmux could tell its pid: the refresh settles it
  (void)table_.Save(entry);  // on failure the starting record stands: the next start adopts the run
  guard_.Update(table_);
  spdlog::info("job '{}' (run {}) started: pid {}, tmux session {}", name, run_id, r.pid, r.tmux_session);
  table_.PublishEvent(event_kind::kJobStarted, r, "started with pid " + std::to_string(r.pid),
                      {{"pid", r.pid}, {"tmux_session", sys::TmuxNativeSessionName(r.tmux_session)}, {"cgroup", r.cgroup}});
  monitor_.Refresh(entry, 0);
  table_.Publish(entry);
  return r;
}

Result<JobRecord> JobCommands::BeginStop(const std::string& name, std::chrono::milliseconds grace) {
  return BeginAgentStop(name, grace, {});
}

Result<JobRecord> JobCommands::BeginAgentStop(const std::string& name, std::chrono::milliseconds grace,
                                              AgentStop cause) {
  JobEntry* found = table_.Find(name);
  if (!found) return NotFound("no job named '" + name + "' (see gpuctl train list)");
  JobEntry& entry = *found;
  monitor_.Refresh(entry, 0);
  JobRecord& r = entry.record;
  if (r.state == JobState::kQueued) {  // nothing runs yet: cancelled
    r.state = JobState::kStopped;
    r.state_reason = "cancelled while queued (waiting for " + r.waiting_for + ")";
    r.stop_requested = true;
    r.ended_unix_ms = table_.NowMs();
    (void)table_.Save(entry);
    table_.Publish(entry);
    JobEndedEvent ended = JobEnded(r);
    table_.PublishEvent(ended.kind, r, ended.message, std::move(ended.fields));
    return r;
  }
  if (r.state == JobState::kUnreadable) return unreadable_.BeginStop(entry, grace);
  if (!IsActive(r.state)) return r;  // already ended: nothing to do
  r.stop_requested = true;
  r.stop_deadline_unix_ms = table_.NowMs() + grace.count();
  r.agent_stop_reason = cause.reason;
  r.agent_stop_cause = cause.cause;
  r.relaunch_after_stop = cause.relaunch;
  // The request is durable before the first signal: an agent restarted
  // during the grace reads a 143 as a stop, and SIGKILLs at the deadline.
  if (Status s = table_.Save(entry); !s.ok()) {
    r.stop_requested = false;
    r.stop_deadline_unix_ms.reset();
    r.agent_stop_reason.clear();
    r.agent_stop_cause.clear();
    r.relaunch_after_stop = false;
    return Status(s.code(), "cannot record the stop of job '" + name + "', so nothing was signalled: " + s.message());
  }
  entry.kill_sent = false;
  table_.Publish(entry);
  // The build governor lets go of a build being stopped (GovernableBuilds):
  // told before the signal, so it does not pause again what the stop resumes.
  guard_.Update(table_);
  processes_.Signal(r, SIGTERM);
  monitor_.Refresh(entry, 0);
  return r;
}

Result<JobRecord> JobCommands::Remove(const std::string& name, const std::string& only_run) {
  JobEntry* found = table_.Find(name);
  if (!found) return NotFound("no job named '" + name + "' (see gpuctl train list)");
  JobEntry& entry = *found;
  monitor_.Refresh(entry, 0);
  if (Status refused = CheckRemoval(entry.record, only_run); !refused.ok()) return refused;
  if (IsActive(entry.record.state)) {
    return FailedPrecondition("job '" + name + "' may still be running (" + JobStateName(entry.record.state) +
                              "); stop it first: gpuctl train stop " + name);
  }
  if (unreadable_.StillRuns(entry.record)) {
    return FailedPrecondition("job '" + name + "' has an unreadable record, but its run " + entry.record.run_id +
                              " is still running (pid " + std::to_string(entry.record.pid) +
                              "); stop it first: gpuctl train stop " + name);
  }
  if (Status s = table_.store().Remove(name); !s.ok()) return s;
  JobRecord removed = std::move(entry.record);
  table_.Erase(name);
  spdlog::info("job '{}' (run {}) removed", name, removed.run_id);
  return removed;
}

}  // namespace gpuctl::train
