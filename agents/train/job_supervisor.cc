#include "agents/train/job_supervisor.h"

#include <signal.h>

#include <algorithm>
#include <thread>

#include <spdlog/spdlog.h>

#include "agents/sys/files.h"
#include "agents/train/exit_status.h"
#include "agents/train/launch_command.h"

namespace gpuctl::train {
namespace {

// Small slices keep the lock short; the monitor loops at once while behind.
constexpr size_t kMaxReadPerRefresh = 1 << 20;
constexpr size_t kMaxEventsKept = 1000;
constexpr int64_t kMetricsSaveEveryMs = 2000;

void MergeMetrics(const MetricsState& fresh, MetricsState& kept) {
  if (fresh.step) kept.step = fresh.step;
  if (fresh.loss) kept.loss = fresh.loss;
  if (fresh.grad_norm) kept.grad_norm = fresh.grad_norm;
  if (fresh.throughput) kept.throughput = fresh.throughput;
  if (fresh.best_throughput &&
      (!kept.best_throughput || ThroughputFamily(*kept.best_throughput) != ThroughputFamily(*fresh.best_throughput) ||
       IsFaster(*fresh.best_throughput, *kept.best_throughput))) {
    kept.best_throughput = fresh.best_throughput;
  }
}

}  // namespace

JobSupervisor::JobSupervisor(JobSupervisorOptions options, sys::Tmux& tmux, sys::ProcessControl& processes,
                             sys::CommandRunner& runner, const sys::Clock& clock)
    : options_(std::move(options)),
      store_(options_.state_dir),
      tmux_(tmux),
      processes_(processes),
      runner_(runner),
      clock_(clock) {}

JobSupervisor::~JobSupervisor() { Shutdown(); }

int64_t JobSupervisor::NowMs() const {
  return std::chrono::duration_cast<std::chrono::milliseconds>(clock_.WallNow().time_since_epoch()).count();
}

JobSupervisor::LiveJob& JobSupervisor::AddLocked(JobRecord record) {
  auto job = std::make_unique<LiveJob>();
  job->record = std::move(record);
  job->saved_offset = job->record.parsed_offset;
  auto metrics = MetricsTracker::Create();
  if (metrics.ok()) job->metrics = std::make_unique<MetricsTracker>(std::move(metrics).value());
  LiveJob& ref = *job;
  jobs_[ref.record.spec.name] = std::move(job);
  return ref;
}

void JobSupervisor::Start() {
  {
    std::lock_guard lock(mutex_);
    for (JobRecord& record : store_.LoadAll()) {
      LiveJob& job = AddLocked(std::move(record));
      if (!IsActive(job.record.state)) continue;
      RefreshLocked(job);
      spdlog::info("job '{}': {} after agent start (pid {})", job.record.spec.name, JobStateName(job.record.state),
                   job.record.pid);
    }
  }
  {
    std::lock_guard lock(mutex_);
    UpdateGuardedLocked();
  }
  monitor_ = std::thread([this] { MonitorLoop(); });
}

void JobSupervisor::Shutdown() {
  {
    std::lock_guard lock(mutex_);
    stopping_ = true;
  }
  wake_.notify_all();
  if (monitor_.joinable()) monitor_.join();
}

void JobSupervisor::MonitorLoop() {
  std::unique_lock lock(mutex_);
  bool backlog = false;
  while (!stopping_) {
    if (backlog) {
      // More log to read: go on at once, but let RPCs and followers have
      // the lock between slices.
      lock.unlock();
      std::this_thread::yield();
      lock.lock();
    } else {
      wake_.wait_for(lock, options_.monitor_interval, [&] { return stopping_; });
    }
    if (stopping_) break;
    backlog = false;
    for (auto& [name, job] : jobs_) {
      if (IsActive(job->record.state) || job->record.parsed_offset < job->record.log_bytes) RefreshLocked(*job);
      backlog = backlog || job->record.parsed_offset < job->record.log_bytes;
    }
  }
}

Status JobSupervisor::CheckContainerRunning(const std::string& vmid) {
  Result<sys::CommandOutput> out = runner_.Run({options_.pct, "status", vmid});
  if (!out.ok()) {
    return FailedPrecondition("cannot check container " + vmid + ": " + out.status().message() +
                              " (--container needs a Proxmox host with pct)");
  }
  if (out->exit_code != 0) {
    std::string why = out->stderr_text.empty() ? out->stdout_text : out->stderr_text;
    while (!why.empty() && (why.back() == '\n' || why.back() == ' ')) why.pop_back();
    return FailedPrecondition("container " + vmid + " does not exist or cannot be queried: " + why +
                              " (see pct list)");
  }
  if (out->stdout_text.find("status: running") == std::string::npos) {
    std::string state = out->stdout_text;
    while (!state.empty() && state.back() == '\n') state.pop_back();
    return FailedPrecondition("container " + vmid + " is not running (" + state + "); start it with: pct start " +
                              vmid);
  }
  return Status::Ok();
}

std::string JobSupervisor::HostPathForContainer(const std::string& vmid, const std::string& inside) const {
  std::string root = options_.lxc_rootfs_template;
  size_t at = root.find("{vmid}");
  if (at != std::string::npos) root.replace(at, 6, vmid);
  while (!root.empty() && root.back() == '/') root.pop_back();
  return root + inside;
}

Result<JobRecord> JobSupervisor::StartJob(JobSpec spec) {
  if (Status s = ValidateJobSpec(spec); !s.ok()) return s;
  if (spec.cwd.empty() && spec.container.empty()) spec.cwd = options_.default_cwd;
  const std::string& name = spec.name;
  std::lock_guard lock(mutex_);
  auto existing = jobs_.find(name);
  if (existing != jobs_.end()) {
    RefreshLocked(*existing->second);
    if (IsActive(existing->second->record.state)) {
      return Status(ErrorCode::kAlreadyExists, "job '" + name + "' is already running (pid " +
                                                   std::to_string(existing->second->record.pid) +
                                                   "); stop it with 'gpuctl train stop " + name +
                                                   "' or choose another --name");
    }
  }
  if (!spec.container.empty()) {
    if (Status s = CheckContainerRunning(spec.container); !s.ok()) return s;
  }
  LaunchPaths inside{store_.LogPath(name), store_.ExitPath(name), ""};
  std::string host_log = inside.log_path, host_exit = inside.exit_path;
  if (!spec.container.empty()) {
    std::string dir = options_.container_state_dir + "/jobs/" + name;
    inside = {dir + "/output.log", dir + "/exit_status", ""};
    host_log = HostPathForContainer(spec.container, inside.log_path);
    host_exit = HostPathForContainer(spec.container, inside.exit_path);
  }
  if (!spec.script.empty()) {
    std::string script = spec.container.empty() ? spec.script : HostPathForContainer(spec.container, spec.script);
    if (!sys::PathExists(script)) return InvalidArgument("--script " + spec.script + ": no such file");
    if (!sys::IsExecutableFile(script)) {
      return InvalidArgument("--script " + spec.script + " is not an executable file (chmod +x " + spec.script + ")");
    }
  }
  if (!spec.cwd.empty() && spec.container.empty() && !sys::PathExists(spec.cwd)) {
    return InvalidArgument("--cwd " + spec.cwd + ": no such directory");
  }
  if (tmux_.HasSession(TmuxSessionName(name))) {
    return Status(ErrorCode::kAlreadyExists, "a tmux session '" + TmuxSessionName(name) +
                                                 "' exists without a running job; remove it with: tmux -L gpuctl "
                                                 "kill-session -t " + TmuxSessionName(name));
  }

  // Past the checks: from here on the job's files change.
  if (Status s = store_.Prepare(name); !s.ok()) return s;
  if (!spec.container.empty()) {
    std::string host_dir = host_log.substr(0, host_log.rfind('/'));
    if (Status s = sys::EnsureDir(host_dir, 0755); !s.ok()) return s.Wrap("preparing the job inside the container");
    if (Status s = sys::ReplaceSymlink(host_log, store_.LogPath(name)); !s.ok()) return s;
  }
  uint32_t restarts = 0;
  if (existing != jobs_.end()) {
    restarts = existing->second->record.restart_count + 1;
    // A rerun starts a fresh log (offsets count from 0); the last run's stays beside it.
    if (sys::PathExists(host_log)) std::rename(host_log.c_str(), (host_log + ".prev").c_str());
  }
  std::string cgroup, cgroup_procs;
  if (options_.cgroups && spec.container.empty()) {
    // A leaf cgroup of the job's own: its memory is limited and counted, and
    // the guard can kill the whole job at once.
    cgroup = options_.cgroup_parent + "/" + name;
    if (Status s = options_.cgroups->CreateCgroup(cgroup); !s.ok() && s.code() != ErrorCode::kAlreadyExists) {
      return s.Wrap("creating the job's memory cgroup " + cgroup);
    }
    std::optional<uint64_t> limit = spec.mem_limit_bytes ? spec.mem_limit_bytes : options_.default_mem_limit_bytes;
    if (Status s = options_.cgroups->SetMemoryMax(cgroup, limit); !s.ok()) {
      return s.Wrap("setting the job's memory limit");
    }
    Result<std::string> dir = options_.cgroups->Directory(cgroup);
    if (!dir.ok()) return dir.status();
    cgroup_procs = *dir + "/cgroup.procs";
  }
  if (Status s = sys::RemoveFile(host_exit); !s.ok()) return s;
  if (Status s = sys::WriteFileAtomic(host_log, "", 0640); !s.ok()) return s;

  JobRecord record;
  record.spec = spec;
  record.tmux_session = TmuxSessionName(name);
  record.created_unix_ms = NowMs();
  record.restart_count = restarts;
  record.log_path = host_log;
  record.exit_path = host_exit;
  record.cgroup = cgroup;
  inside.cgroup_procs = cgroup_procs;
  if (Status s = tmux_.NewSession(BuildLaunch(spec, inside, options_.pct)); !s.ok()) return s;
  record.started_unix_ms = NowMs();
  Result<int64_t> pid = tmux_.PanePid(record.tmux_session);
  if (pid.ok()) {
    record.pid = *pid;
    // tmux makes the pane process lead its own group, but may not have done so yet
    // when it reports the pid: the pid itself is the group to signal.
    record.pgid = *pid;
    record.pid_start_time = processes_.StartTime(*pid);
    record.state = JobState::kRunning;
  } else {
    // The job ended before tmux could tell its pid: its exit file says how.
    record.state = JobState::kStarting;
  }
  LiveJob& job = AddLocked(std::move(record));
  SaveLocked(job.record);
  UpdateGuardedLocked();
  RefreshLocked(job);
  spdlog::info("job '{}' started: pid {}, tmux session {}", name, job.record.pid, job.record.tmux_session);
  if (options_.publish) {
    options_.publish("job_started", name, "started with pid " + std::to_string(job.record.pid),
                     {{"pid", job.record.pid}, {"tmux_session", job.record.tmux_session}, {"cgroup", cgroup}});
  }
  return job.record;
}

Result<JobRecord> JobSupervisor::GetJob(const std::string& name) {
  std::lock_guard lock(mutex_);
  auto it = jobs_.find(name);
  if (it == jobs_.end()) return NotFound("no job named '" + name + "' (see gpuctl train list)");
  RefreshLocked(*it->second);
  return it->second->record;
}

std::vector<JobRecord> JobSupervisor::ListJobs() {
  std::lock_guard lock(mutex_);
  std::vector<JobRecord> out;
  for (auto& [name, job] : jobs_) {
    RefreshLocked(*job);
    out.push_back(job->record);
  }
  std::sort(out.begin(), out.end(),
            [](const JobRecord& a, const JobRecord& b) { return a.created_unix_ms < b.created_unix_ms; });
  return out;
}

std::vector<GuardedJob> JobSupervisor::RunningJobs() {
  std::lock_guard lock(guard_mutex_);
  return guarded_;
}

void JobSupervisor::MarkKilledByGuard(const std::string& name, const std::string& reason) {
  std::lock_guard lock(guard_mutex_);
  guard_kills_[name] = reason;
}

void JobSupervisor::UpdateGuardedLocked() {
  std::vector<GuardedJob> running;
  for (auto& [name, job] : jobs_) {
    if (IsActive(job->record.state)) running.push_back({name, job->record.cgroup, job->record.pgid});
  }
  std::lock_guard lock(guard_mutex_);
  guarded_ = std::move(running);
}

Result<LogSource> JobSupervisor::GetLogSource(const std::string& name) {
  // Followers ask at every end of file: only the cheap end-of-job check
  // runs here, never log parsing under the lock, which would stall them all.
  std::lock_guard lock(mutex_);
  auto it = jobs_.find(name);
  if (it == jobs_.end()) return NotFound("no job named '" + name + "' (see gpuctl train list)");
  JobRecord& r = it->second->record;
  if (IsActive(r.state) && SettleIfEndedLocked(*it->second)) SaveLocked(r);
  return LogSource{r.log_path, !IsActive(r.state)};
}

Result<JobRecord> JobSupervisor::StopJob(const std::string& name, std::chrono::milliseconds grace) {
  int64_t pgid = 0;
  std::string session;
  {
    std::lock_guard lock(mutex_);
    auto it = jobs_.find(name);
    if (it == jobs_.end()) return NotFound("no job named '" + name + "' (see gpuctl train list)");
    LiveJob& job = *it->second;
    RefreshLocked(job);
    if (!IsActive(job.record.state)) return job.record;  // already ended: nothing to do
    job.record.stop_requested = true;
    SaveLocked(job.record);
    pgid = job.record.pgid;
    session = job.record.tmux_session;
  }
  if (pgid > 0) {
    if (Status s = processes_.SignalGroup(pgid, SIGTERM); !s.ok()) spdlog::warn("stop {}: {}", name, s.message());
    auto deadline = clock_.SteadyNow() + grace;
    while (processes_.GroupAlive(pgid) && clock_.SteadyNow() < deadline) {
      std::this_thread::sleep_for(std::chrono::milliseconds(20));
    }
    if (processes_.GroupAlive(pgid)) {
      spdlog::info("job '{}' still running after {} ms: SIGKILL", name, grace.count());
      (void)processes_.SignalGroup(pgid, SIGKILL);
      auto kill_deadline = clock_.SteadyNow() + std::chrono::seconds(2);
      while (processes_.GroupAlive(pgid) && clock_.SteadyNow() < kill_deadline) {
        std::this_thread::sleep_for(std::chrono::milliseconds(10));
      }
    }
  }
  if (Status s = tmux_.KillSession(session); !s.ok()) spdlog::warn("stop {}: {}", name, s.message());
  std::lock_guard lock(mutex_);
  LiveJob& job = *jobs_.at(name);
  RefreshLocked(job);
  return job.record;
}

void JobSupervisor::SaveLocked(const JobRecord& record) {
  if (Status s = store_.Save(record); !s.ok()) spdlog::error("saving job '{}': {}", record.spec.name, s.message());
}

void JobSupervisor::RefreshLocked(LiveJob& job) {
  bool was_active = IsActive(job.record.state);
  bool events_added = ReadNewLogLocked(job);
  bool settled = was_active && SettleIfEndedLocked(job);
  // A job that just ended may have written its last lines after our read.
  if (settled) events_added = ReadNewLogLocked(job) || events_added;
  int64_t now = NowMs();
  // Metrics-only progress is saved every few seconds; a log that did not
  // move is not rewritten (ListJobs refreshes every job).
  bool offset_moved =
      job.record.parsed_offset != job.saved_offset && now - job.last_save_ms >= kMetricsSaveEveryMs;
  if (settled || events_added || offset_moved) {
    SaveLocked(job.record);
    job.last_save_ms = now;
    job.saved_offset = job.record.parsed_offset;
  }
}

bool JobSupervisor::ReadNewLogLocked(LiveJob& job) {
  JobRecord& r = job.record;
  Result<uint64_t> size = sys::RegularFileSize(r.log_path);
  if (!size.ok()) return false;
  if (*size < r.parsed_offset) r.parsed_offset = 0;  // truncated or replaced: read it anew
  r.log_bytes = *size;
  if (*size == r.parsed_offset) return false;
  Result<std::string> data = sys::ReadRegularFileRange(r.log_path, r.parsed_offset, kMaxReadPerRefresh);
  if (!data.ok() || data->empty()) return false;
  // Feed whole lines only, so parsed_offset always sits at a line start and a
  // restarted agent resumes cleanly. A job that ended, or a line past the
  // splitter's cap, is fed as it is.
  size_t end = data->find_last_of("\n\r");
  size_t feed = end == std::string::npos ? 0 : end + 1;
  bool ended = !IsActive(r.state);
  if (ended || data->size() - feed > LineSplitter::kDefaultMaxLineBytes) feed = data->size();
  if (feed == 0) return false;

  std::vector<LogEvent> events;
  auto sink = [&](std::string_view line, uint64_t offset) {
    job.events.ObserveLine(line, offset, events);
    if (job.metrics) job.metrics->Observe(line);
  };
  job.lines.Feed(std::string_view(*data).substr(0, feed), r.parsed_offset, sink);
  r.parsed_offset += feed;
  if (ended && r.parsed_offset == r.log_bytes) job.lines.Finish(sink);
  if (job.metrics) MergeMetrics(job.metrics->state(), r.metrics);

  int64_t now = NowMs();
  for (LogEvent& e : events) {
    if (r.events.size() >= kMaxEventsKept) {
      if (!job.event_cap_logged) spdlog::warn("job '{}': over {} events, keeping the first", r.spec.name, kMaxEventsKept);
      job.event_cap_logged = true;
      break;
    }
    spdlog::info("job '{}': {} at offset {}", r.spec.name, e.kind, e.offset);
    if (options_.publish) options_.publish(e.kind, r.spec.name, e.message, ToJson(e));
    r.events.push_back({std::move(e), now});
  }
  return !events.empty();
}

bool JobSupervisor::SettleIfEndedLocked(LiveJob& job) {
  JobRecord& r = job.record;
  {
    std::lock_guard lock(guard_mutex_);
    auto kill = guard_kills_.find(r.spec.name);
    if (kill != guard_kills_.end()) r.guard_kill_reason = kill->second;
  }
  ExitStatusReading exit = ReadExitStatus(r.exit_path);
  // No status (or one that is not a status: the job itself may scribble
  // there) while its process lives: it runs.
  if (exit.kind != ExitStatusReading::Kind::kValue) {
    bool ours = r.pid > 0 && processes_.Alive(r.pid) &&
                (!r.pid_start_time || processes_.StartTime(r.pid) == r.pid_start_time);
    if (ours) {
      r.state = JobState::kRunning;
      return false;
    }
    exit = ReadExitStatus(r.exit_path);  // it may have ended between the two looks
  }
  r.ended_unix_ms = NowMs();
  if (exit.kind == ExitStatusReading::Kind::kValue) {
    int code = exit.value;
    r.exit_code = code;
    if (code > 128 && code <= 128 + 64) r.term_signal = code - 128;
    if (r.guard_kill_reason) {
      r.state = JobState::kKilledByGuard;
      r.state_reason = *r.guard_kill_reason;
    } else if (r.stop_requested) {
      r.state = JobState::kStopped;
      r.state_reason = "stopped by request";
    } else if (code == 0) {
      r.state = JobState::kSucceeded;
      r.state_reason = "exited 0";
    } else {
      r.state = JobState::kFailed;
      r.state_reason = r.term_signal ? "killed by signal " + std::to_string(*r.term_signal)
                                     : "exited " + std::to_string(code);
    }
  } else if (r.guard_kill_reason) {
    r.state = JobState::kKilledByGuard;
    r.state_reason = *r.guard_kill_reason;
  } else if (r.stop_requested) {
    r.state = JobState::kStopped;
    r.state_reason = "stopped by request";
  } else if (exit.kind == ExitStatusReading::Kind::kUnreadable) {
    // It ended (its processes are gone) but how is unknown: not a success,
    // and not the "no status at all" of a SIGKILL or a reboot.
    r.state = JobState::kFailed;
    r.state_reason = "ended, but its exit status is unreadable: " + exit.why;
  } else {
    r.state = JobState::kLost;
    r.state_reason = "its processes are gone and no exit status was written "
                     "(killed with SIGKILL, or the host rebooted)";
  }
  spdlog::info("job '{}' {}: {}", r.spec.name, JobStateName(r.state), r.state_reason);
  {
    std::lock_guard lock(guard_mutex_);
    guard_kills_.erase(r.spec.name);
  }
  UpdateGuardedLocked();
  if (options_.publish) {
    nlohmann::json fields = {{"state", JobStateName(r.state)}};
    fields["exit_code"] = r.exit_code ? nlohmann::json(*r.exit_code) : nlohmann::json(nullptr);
    options_.publish("job_ended", r.spec.name, std::string(JobStateName(r.state)) + ": " + r.state_reason, fields);
  }
  if (options_.cgroups && !r.cgroup.empty()) {
    // Empty once the job is gone; a straggler keeps it, and the next run reuses it.
    if (Status s = options_.cgroups->RemoveCgroup(r.cgroup); !s.ok()) {
      spdlog::debug("job '{}': cgroup {} kept: {}", r.spec.name, r.cgroup, s.message());
    }
  }
  return true;
}

}  // namespace gpuctl::train
