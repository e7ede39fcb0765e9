// What the job supervisor's owner thread does with jobs: start (record
// first), refresh (log, end, stop escalation), stop, remove, and the
// reconciliation at agent start. Only the owner thread runs this code.
#include <signal.h>

#include <charconv>
#include <set>

#include <spdlog/spdlog.h>

#include "agents/sys/confined_root.h"
#include "agents/sys/disk_space.h"
#include "agents/sys/files.h"
#include "agents/train/event_retention.h"
#include "agents/train/exit_status.h"
#include "agents/train/job_end.h"
#include "agents/train/job_supervisor.h"
#include "agents/train/run_id.h"
#include "common/units.h"

namespace gpuctl::train {
namespace {

// Metrics-only progress is saved at most this often; events and ends at once.
constexpr int64_t kMetricsSaveEveryMs = 2000;
constexpr std::string_view kSessionPrefix = "gpuctl-";
// How long a run recorded as starting, with no launch seen, is looked for.
constexpr int64_t kLaunchGraceMs = 10'000;

// Below this much free space the disk holding a job's files counts as full:
// its log was cut short, and files may not have been written.
constexpr uint64_t kDiskFullBelowBytes = 64 << 10;

// Said in the state of a run that ended while the disk holding its log was
// full, so a missing exit status or a short log has its cause named.
std::optional<std::string> DiskFullNote(const JobRecord& r) {
  if (r.log_path.empty()) return std::nullopt;
  const std::string dir = r.log_path.substr(0, r.log_path.rfind('/'));
  std::optional<uint64_t> free = sys::FreeBytes(dir);
  if (!free || *free >= kDiskFullBelowBytes) return std::nullopt;
  return "the disk holding " + dir + " is full (" + FormatBytes(*free) + " free), so its log is cut short";
}

}  // namespace

JobSupervisor::Entry& JobSupervisor::Put(JobRecord record) {
  auto entry = std::make_unique<Entry>();
  entry->record = std::move(record);
  entry->saved_offset = entry->record.parsed_offset;
  Entry& ref = *entry;
  entries_[ref.record.spec.name] = std::move(entry);
  return ref;
}

Status JobSupervisor::Save(Entry& entry) {
  Status s = store_.Save(entry.record);
  if (s.ok()) {
    entry.last_save_ms = NowMs();
    entry.saved_offset = entry.record.parsed_offset;
  } else {
    spdlog::error("saving job '{}': {}", entry.record.spec.name, s.message());
  }
  return s;
}

void JobSupervisor::PublishEvent(const std::string& kind, const JobRecord& record, const std::string& message,
                                 nlohmann::json fields) {
  if (!options_.publish) return;
  if (!fields.is_object()) fields = nlohmann::json::object();
  fields["run_id"] = record.run_id;
  options_.publish(kind, record.spec.name, message, std::move(fields));
}

bool JobSupervisor::ProcessesRemain(const JobRecord& r) {
  // A job runs while anything of it runs: its cgroup's processes, its
  // wrapper, or what it left in its process group after the wrapper exited.
  if (!r.cgroup.empty() && options_.cgroups) {
    Result<std::vector<int64_t>> procs = options_.cgroups->Processes(r.cgroup);
    if (procs.ok() && !procs->empty()) return true;
  }
  if (InnerAlive(r)) return true;
  if (r.pid > 0 && processes_.Alive(r.pid)) {
    if (!r.pid_start_time || processes_.StartTime(r.pid) == r.pid_start_time) return true;
    // The pid is another process's now. A pid is never handed out while a
    // group of that number has members, so our group is gone too; a group
    // of that number is the new process's.
    return false;
  }
  return r.pgid > 0 && processes_.GroupAlive(r.pgid);
}

bool JobSupervisor::InnerAlive(const JobRecord& r) {
  if (r.inner_pid > 0 && processes_.Alive(r.inner_pid) &&
      (!r.inner_start_time || processes_.StartTime(r.inner_pid) == r.inner_start_time)) {
    return true;
  }
  return r.inner_pgid > 0 && processes_.GroupAlive(r.inner_pgid);
}

void JobSupervisor::FindInnerProcess(Entry& entry) {
  JobRecord& r = entry.record;
  if (r.pid_path.empty() || r.inner_pid > 0 || !IsActive(r.state)) return;
  Result<std::string> text = sys::ReadRegularFile(r.pid_path, 32);
  if (!text.ok()) return;  // not written yet
  int64_t inner = 0;
  std::string_view digits(*text);
  while (!digits.empty() && digits.back() == '\n') digits.remove_suffix(1);
  auto [end, err] = std::from_chars(digits.data(), digits.data() + digits.size(), inner);
  if (err != std::errc() || end != digits.data() + digits.size() || inner <= 0) return;
  std::optional<sys::ConfinedPath> where = sys::FindConfinedRoot(r.pid_path);
  if (!where) return;
  std::optional<int64_t> host = processes_.HostPidInContainer(where->root, inner);
  if (!host) return;  // gone already, or not yet visible: the exit status will say
  r.inner_pid = *host;
  r.inner_start_time = processes_.StartTime(*host);
  // setsid made it lead its own group; without setsid(1) in the container
  // it shares the wrapper's, which only the pid reaches.
  r.inner_pgid = processes_.ProcessGroup(*host) == *host ? *host : 0;
  spdlog::info("job '{}' (run {}): its command is pid {} inside container {}, {} here", r.spec.name, r.run_id,
               inner, r.spec.container, *host);
  (void)Save(entry);
  Publish(entry);
  UpdateGuarded();
}

void JobSupervisor::SignalJob(const JobRecord& r, int sig) {
  // A container job's command first: signals to the host side stop at pct
  // exec and never reach it.
  if (r.inner_pgid > 0) {
    if (Status s = processes_.SignalGroup(r.inner_pgid, sig); !s.ok()) {
      spdlog::warn("job '{}': {}", r.spec.name, s.message());
    }
  } else if (r.inner_pid > 0 && processes_.StartTime(r.inner_pid) == r.inner_start_time) {
    (void)processes_.Signal(r.inner_pid, sig);
  }
  if (r.pgid > 0) {
    if (Status s = processes_.SignalGroup(r.pgid, sig); !s.ok()) spdlog::warn("job '{}': {}", r.spec.name, s.message());
  }
  if (!r.cgroup.empty() && options_.cgroups) {
    // Whatever left the process group (setsid, a daemonized child) is still
    // in the cgroup.
    Result<std::vector<int64_t>> procs = options_.cgroups->Processes(r.cgroup);
    if (procs.ok()) {
      for (int64_t pid : *procs) (void)processes_.Signal(pid, sig);
    }
  }
  // A stopped process (a build's compile the governor paused) takes no
  // SIGTERM until it runs again.
  if (sig == SIGTERM) SignalJob(r, SIGCONT);
}

bool JobSupervisor::AdoptLaunched(Entry& entry) {
  JobRecord& r = entry.record;
  Result<std::string> run = tmux_.SessionEnvironment(r.tmux_session, "GPUCTL_RUN_ID");
  if (!run.ok() || *run != r.run_id) return false;
  Result<Pane> pane = launcher_.FindPane(r.tmux_session);
  if (!pane.ok()) return false;
  r.pid = r.pgid = pane->pid;
  r.pid_start_time = pane->start_time;
  if (r.started_unix_ms == 0) r.started_unix_ms = NowMs();
  r.state = JobState::kRunning;
  r.state_reason = "running (its launch was found after an agent restart)";
  (void)Save(entry);
  UpdateGuarded();
  spdlog::info("job '{}' (run {}): adopted its launched session, pid {}", r.spec.name, r.run_id, r.pid);
  return true;
}

bool JobSupervisor::SettleIfEnded(Entry& entry) {
  JobRecord& r = entry.record;
  if (r.state == JobState::kStarting && r.pid == 0 && r.started_unix_ms == 0) {
    // Recorded, but the agent stopped before it saw the launch. A launch an
    // old agent had in flight may still land (its tmux client outlives it):
    // look for the run's session for a while before calling it never run.
    if (AdoptLaunched(entry)) return false;
    if (NowMs() - r.created_unix_ms < kLaunchGraceMs &&
        ReadExitStatus(r.exit_path).kind == ExitStatusReading::Kind::kMissing) {
      return false;
    }
  }
  if (ProcessesRemain(r)) {
    if (r.state == JobState::kStarting && r.pid > 0) r.state = JobState::kRunning;
    return false;
  }
  std::optional<std::string> guard_reason, failure;
  {
    std::lock_guard lock(guard_mutex_);
    auto kill = guard_kills_.find(r.run_id);
    if (kill != guard_kills_.end()) guard_reason = kill->second;
    auto failed = failures_.find(r.run_id);
    if (failed != failures_.end()) failure = failed->second;
  }
  const JobEnd end = DecideRunEnd({.exit = ReadExitStatus(r.exit_path),
                                   .stop_requested = r.stop_requested,
                                   .guard_kill_reason = guard_reason,
                                   .failure = failure,
                                   .never_seen_launched = r.state == JobState::kStarting && r.started_unix_ms == 0,
                                   .disk_full = DiskFullNote(r)});
  r.state = end.state;
  r.state_reason = end.reason;
  r.exit_code = end.exit_code;
  r.term_signal = end.term_signal;
  if (guard_reason) r.guard_kill_reason = guard_reason;
  r.ended_unix_ms = NowMs();
  for (JobGpuMemory& gpu : r.gpu_memory) gpu.used_bytes = 0;  // the peaks stay
  spdlog::info("job '{}' (run {}) {}: {}", r.spec.name, r.run_id, JobStateName(r.state), r.state_reason);
  {
    std::lock_guard lock(guard_mutex_);
    guard_kills_.erase(r.run_id);
    failures_.erase(r.run_id);
  }
  UpdateGuarded();
  nlohmann::json fields = {{"state", JobStateName(r.state)}};
  fields["exit_code"] = r.exit_code ? nlohmann::json(*r.exit_code) : nlohmann::json(nullptr);
  PublishEvent("job_ended", r, std::string(JobStateName(r.state)) + ": " + r.state_reason, fields);
  if (options_.cgroups && !r.cgroup.empty()) {
    if (Status s = options_.cgroups->RemoveCgroup(r.cgroup); !s.ok()) {
      spdlog::debug("job '{}': cgroup {} kept: {}", r.spec.name, r.cgroup, s.message());
    }
  }
  // A stopped job's session goes with it (one whose wrapper ignored SIGHUP
  // would otherwise linger).
  if (r.stop_requested && !r.tmux_session.empty()) {
    if (Status s = tmux_.KillSession(r.tmux_session); !s.ok()) spdlog::warn("job '{}': {}", r.spec.name, s.message());
  }
  return true;
}

void JobSupervisor::Refresh(Entry& entry, size_t ingest_bytes) {
  JobRecord& r = entry.record;
  if (r.state == JobState::kUnreadable) return RefreshUnreadable(entry);
  const JobState state_before = r.state;
  const uint64_t offset_before = r.parsed_offset, bytes_before = r.log_bytes;
  auto on_event = [this](const JobRecord& record, const LogEvent& e) {
    // A run may print thousands of tracebacks: those are the debug log's.
    spdlog::log(DecidesSomething(e) ? spdlog::level::info : spdlog::level::debug, "job '{}': {} at offset {}",
                record.spec.name, e.kind, e.offset);
    PublishEvent(e.kind, record, e.message, ToJson(e));
  };
  FindInnerProcess(entry);
  int64_t now = NowMs();
  bool events_added = ingest_bytes > 0 && entry.ingest.Ingest(r, ingest_bytes, now, on_event);
  bool settled = IsActive(r.state) && SettleIfEnded(entry);
  // A job that just ended may have written its last lines after our read.
  if (settled && ingest_bytes > 0) events_added = entry.ingest.Ingest(r, ingest_bytes, now, on_event) || events_added;
  // Settled by a quick refresh (a follower's end check, a stop) that reads
  // nothing: the log's size now, so that the ticks read its last lines (an
  // OOM to remediate among them) instead of taking it as read.
  if (settled && ingest_bytes == 0 && !r.log_path.empty()) {
    if (Result<uint64_t> size = sys::RegularFileSize(r.log_path); size.ok()) r.log_bytes = *size;
    backlog_ = backlog_ || LogIngest::Behind(r);
  }
  if (IsActive(r.state) && r.stop_requested && r.stop_deadline_unix_ms && now >= *r.stop_deadline_unix_ms &&
      !entry.kill_sent) {
    spdlog::info("job '{}' still running past its stop deadline: SIGKILL", r.spec.name);
    SignalJob(r, SIGKILL);
    entry.kill_sent = true;
  }
  if (entry.kill_sent && IsActive(r.state)) entry.recheck_at = clock_.SteadyNow() + std::chrono::milliseconds(50);
  // A relaunched run past the step its last attempt reached: the change held.
  bool held = r.hold_step && r.metrics.step && *r.metrics.step > *r.hold_step;
  if (held) {
    PublishEvent("oom_remediation_held", r,
                 "attempt " + std::to_string(r.spec.attempt) + " passed step " + std::to_string(*r.hold_step) +
                     ", where the last attempt ended",
                 {{"attempt", r.spec.attempt}, {"step", *r.metrics.step}, {"last_attempt_step", *r.hold_step}});
    r.hold_step.reset();
  }
  bool offset_moved = r.parsed_offset != entry.saved_offset && now - entry.last_save_ms >= kMetricsSaveEveryMs;
  if (settled || events_added || offset_moved || held || r.state != state_before) (void)Save(entry);
  if (settled || events_added || r.state != state_before || r.parsed_offset != offset_before ||
      r.log_bytes != bytes_before) {
    Publish(entry);
  }
}

Result<JobRecord> JobSupervisor::DoStart(JobSpec spec, Lineage lineage, bool admitted) {
  const std::string name = spec.name;
  if (spec.cwd.empty()) {
    spec.cwd = spec.container.empty() ? options_.default_cwd : launcher_.DefaultContainerCwd(spec.container);
  }
  auto existing = entries_.find(name);
  uint32_t restarts = 0;
  if (existing != entries_.end()) {
    Entry& old = *existing->second;
    Refresh(old, 0);
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
  std::string run_id = NewRunId(clock_.WallNow());
  Result<Placement> placement = launcher_.Plan(spec, run_id);
  if (!placement.ok()) return placement.status();
  if (!admitted && options_.read_gpus && (spec.num_gpus > 0 || spec.gpu_mem_bytes || !spec.gpus.empty())) {
    const sys::GpuReport report = options_.read_gpus();
    GpuRequest request{spec.num_gpus, {}, spec.gpu_mem_bytes};
    if (!spec.gpus.empty()) request.gpus = SplitGpuList(spec.gpus);
    uint32_t ahead = 0;
    for (const auto& [other, entry] : entries_) {
      const JobRecord& q = entry->record;
      if (q.state == JobState::kQueued && other != name && q.spec.priority >= spec.priority) ++ahead;
    }
    StartPlacement decided =
        DecideStartPlacement(request, GpuSlots(report), report.error, ahead, options_.gpu_busy_below_bytes);
    if (decided.kind == StartPlacement::Kind::kRefuse) return decided.refusal;
    if (decided.kind == StartPlacement::Kind::kQueue) {
      return Enqueue(std::move(spec), std::move(lineage), decided.waiting_for, restarts);
    }
    if (spec.gpus.empty() && !decided.gpus.empty()) spec.gpus = VisibleDevices(decided.gpus);
  }

  // The record first, durable, before anything of the run exists: an agent
  // killed from here on finds the run at its next start.
  JobRecord record;
  record.spec = spec;
  record.run_id = run_id;
  record.state = JobState::kStarting;
  record.state_reason = "starting";
  record.tmux_session = TmuxSessionName(name);
  record.created_unix_ms = NowMs();
  record.restart_count = restarts;
  record.log_path = placement->log_path;
  record.exit_path = placement->exit_path;
  record.cgroup = placement->cgroup;
  record.pid_path = placement->pid_path;
  record.attempts = std::move(lineage.attempts);
  record.hold_step = lineage.hold_step;
  Status saved = store_.Prepare(name);
  if (saved.ok()) saved = store_.Save(record);
  if (!saved.ok()) {
    return Status(saved.code(), "cannot record job '" + name + "', so it was not started: " + saved.message());
  }
  bool rerun = existing != entries_.end();
  std::set<uint32_t> previous_gpu_pids;
  int64_t previous_ended = 0;
  if (rerun) {
    previous_gpu_pids = existing->second->gpu_pids;
    previous_ended = existing->second->record.ended_unix_ms;
  }
  Entry& entry = Put(std::move(record));
  entry.previous_gpu_pids = std::move(previous_gpu_pids);
  entry.previous_ended_unix_ms = previous_ended;
  JobRecord& r = entry.record;
  Publish(entry);

  auto fail_start = [&](const Status& why) -> Status {
    r.state = JobState::kFailed;
    r.state_reason = "could not start: " + why.message();
    r.ended_unix_ms = NowMs();
    (void)Save(entry);
    Publish(entry);
    return why;
  };
  if (Status s = launcher_.Prepare(spec, *placement, rerun); !s.ok()) return fail_start(s);
  if (Status s = launcher_.Launch(spec, *placement, run_id); !s.ok()) return fail_start(s);
  r.started_unix_ms = NowMs();
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
  (void)Save(entry);  // on failure the starting record stands: the next start adopts the run
  UpdateGuarded();
  spdlog::info("job '{}' (run {}) started: pid {}, tmux session {}", name, run_id, r.pid, r.tmux_session);
  PublishEvent("job_started", r, "started with pid " + std::to_string(r.pid),
               {{"pid", r.pid}, {"tmux_session", sys::TmuxNativeSessionName(r.tmux_session)}, {"cgroup", r.cgroup}});
  Refresh(entry, 0);
  Publish(entry);
  return r;
}

Result<JobRecord> JobSupervisor::DoBeginStop(const std::string& name, std::chrono::milliseconds grace) {
  auto it = entries_.find(name);
  if (it == entries_.end()) return NotFound("no job named '" + name + "' (see gpuctl train list)");
  Entry& entry = *it->second;
  Refresh(entry, 0);
  JobRecord& r = entry.record;
  if (r.state == JobState::kQueued) {  // nothing runs yet: cancelled
    r.state = JobState::kStopped;
    r.state_reason = "cancelled while queued (waiting for " + r.waiting_for + ")";
    r.stop_requested = true;
    r.ended_unix_ms = NowMs();
    (void)Save(entry);
    Publish(entry);
    PublishEvent("job_ended", r, "stopped: " + r.state_reason, {{"state", "stopped"}, {"exit_code", nullptr}});
    return r;
  }
  if (r.state == JobState::kUnreadable) return BeginStopUnreadable(entry, grace);
  if (!IsActive(r.state)) return r;  // already ended: nothing to do
  r.stop_requested = true;
  r.stop_deadline_unix_ms = NowMs() + grace.count();
  // The request is durable before the first signal: an agent restarted
  // during the grace reads a 143 as a stop, and SIGKILLs at the deadline.
  if (Status s = Save(entry); !s.ok()) {
    r.stop_requested = false;
    r.stop_deadline_unix_ms.reset();
    return Status(s.code(), "cannot record the stop of job '" + name + "', so nothing was signalled: " + s.message());
  }
  entry.kill_sent = false;
  Publish(entry);
  SignalJob(r, SIGTERM);
  Refresh(entry, 0);
  return r;
}

Result<JobRecord> JobSupervisor::DoRemove(const std::string& name) {
  auto it = entries_.find(name);
  if (it == entries_.end()) return NotFound("no job named '" + name + "' (see gpuctl train list)");
  Entry& entry = *it->second;
  Refresh(entry, 0);
  if (IsActive(entry.record.state)) {
    return FailedPrecondition("job '" + name + "' may still be running (" + JobStateName(entry.record.state) +
                              "); stop it first: gpuctl train stop " + name);
  }
  if (UnreadableStillRuns(entry.record)) {
    return FailedPrecondition("job '" + name + "' has an unreadable record, but its run " + entry.record.run_id +
                              " is still running (pid " + std::to_string(entry.record.pid) +
                              "); stop it first: gpuctl train stop " + name);
  }
  if (Status s = store_.Remove(name); !s.ok()) return s;
  JobRecord removed = std::move(entry.record);
  entries_.erase(it);
  Unpublish(name);
  spdlog::info("job '{}' (run {}) removed", name, removed.run_id);
  return removed;
}

void JobSupervisor::Reconcile() {
  for (JobRecord& record : store_.LoadAll()) Put(std::move(record));
  AdoptOrphans();
  for (auto& [name, entry] : entries_) FindUnreadableRun(*entry);
  for (auto& [name, entry] : entries_) {
    JobRecord& r = entry->record;
    // What the log gained while no agent read it, the job's last lines
    // among it when it ended meanwhile: the ticks read it from where the
    // record left off (a stale log_bytes would say nothing is behind).
    if (r.state != JobState::kUnreadable && !r.log_path.empty()) {
      if (Result<uint64_t> size = sys::RegularFileSize(r.log_path); size.ok() && *size != r.log_bytes) {
        r.log_bytes = *size;
        backlog_ = backlog_ || LogIngest::Behind(r);
      }
    }
    // Saved, then the agent stopped: did the launch happen?
    if (r.state == JobState::kStarting && r.pid == 0) AdoptLaunched(*entry);
    if (IsActive(r.state)) {
      Refresh(*entry, 0);
      spdlog::info("job '{}' (run {}): {} after agent start (pid {})", name, r.run_id, JobStateName(r.state), r.pid);
    }
    Publish(*entry);
  }
  UpdateGuarded();
}

void JobSupervisor::AdoptOrphans() {
  Result<std::vector<std::string>> sessions = tmux_.ListSessions();
  if (!sessions.ok()) {
    spdlog::warn("cannot list tmux sessions to find orphaned jobs: {}", sessions.status().message());
    return;
  }
  for (const std::string& session : *sessions) {
    if (!session.starts_with(kSessionPrefix)) continue;
    std::string name = session.substr(kSessionPrefix.size());
    if (!ValidateJobName(name).ok() || TmuxSessionName(name) != session) continue;
    std::string run = tmux_.SessionEnvironment(session, "GPUCTL_RUN_ID").value_or("");
    auto it = entries_.find(name);
    if (it != entries_.end()) {
      const JobRecord& claimed = it->second->record;
      // Its own run's session; or a session of an agent from before run ids,
      // claimed by its record.
      if (claimed.run_id == run || (run.empty() && IsActive(claimed.state))) continue;
      if (IsActive(claimed.state) || claimed.state == JobState::kUnreadable) {
        spdlog::warn("tmux session {} (run '{}') runs beside job '{}' (run {}, {}); left alone", session, run, name,
                     claimed.run_id, JobStateName(claimed.state));
        continue;
      }
    }
    JobRecord orphan;
    orphan.spec.name = name;
    orphan.run_id = run.empty() ? "unknown" : run;
    orphan.state = JobState::kOrphaned;
    orphan.state_reason = "found running at agent start with no record claiming it (tmux session " + session + ")";
    orphan.tmux_session = session;
    orphan.created_unix_ms = orphan.started_unix_ms = NowMs();
    orphan.log_path = store_.LogPath(name);
    orphan.exit_path = store_.ExitPath(name);
    if (Result<Pane> pane = launcher_.FindPane(session); pane.ok()) {
      orphan.pid = orphan.pgid = pane->pid;
      orphan.pid_start_time = pane->start_time;
    }
    spdlog::warn("job '{}': {}", name, orphan.state_reason);
    if (Status s = store_.Prepare(name); !s.ok()) spdlog::error("job '{}': {}", name, s.message());
    Entry& entry = Put(std::move(orphan));
    (void)Save(entry);
    PublishEvent("job_orphaned", entry.record, entry.record.state_reason,
                 {{"pid", entry.record.pid}, {"tmux_session", sys::TmuxNativeSessionName(session)}});
  }
}

}  // namespace gpuctl::train
