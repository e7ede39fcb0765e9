#include "agents/train/run_monitor.h"

#include <signal.h>

#include <spdlog/spdlog.h>

#include "agents/sys/disk_space.h"
#include "agents/sys/files.h"
#include "agents/train/event_retention.h"
#include "agents/train/exit_status.h"
#include "agents/train/job_end.h"
#include "agents/train/log_tail.h"
#include "common/event_kinds.h"
#include "common/units.h"

namespace gpuctl::train {
namespace {

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

RunMonitor::RunMonitor(JobTable& table, const JobParts& hooks, RunProcesses& processes, UnreadableRuns& unreadable,
                       GuardView& guard, JobLauncher& launcher, sys::Tmux& tmux, std::chrono::milliseconds interval)
    : table_(table),
      hooks_(hooks),
      processes_(processes),
      unreadable_(unreadable),
      guard_(guard),
      launcher_(launcher),
      tmux_(tmux),
      interval_(interval) {}

void RunMonitor::NoteBacklog(const JobRecord& record) { backlog_ = backlog_ || LogIngest::Behind(record); }

void RunMonitor::OnStart(JobTable& table) { next_tick_ = table.clock().SteadyNow() + interval_; }

void RunMonitor::Tick(JobTable& table, TimePoint now) {
  if (!backlog_ && now < next_tick_) return;
  backlog_ = false;
  table.ForEach([&](JobEntry& entry) {
    const JobRecord& r = entry.record;
    if (!IsActive(r.state) && !LogIngest::Behind(r) && !(r.state == JobState::kUnreadable && r.stop_requested)) {
      return;
    }
    Refresh(entry, kTickIngestBytes);
    NoteBacklog(entry.record);
  });
  next_tick_ = table.clock().SteadyNow() + interval_;
}

bool RunMonitor::AdoptLaunched(JobEntry& entry) {
  JobRecord& r = entry.record;
  Result<std::string> run = tmux_.SessionEnvironment(r.tmux_session, "GPUCTL_RUN_ID");
  if (!run.ok() || *run != r.run_id) return false;
  Result<Pane> pane = launcher_.FindPane(r.tmux_session);
  if (!pane.ok()) return false;
  r.pid = r.pgid = pane->pid;
  r.pid_start_time = pane->start_time;
  if (r.started_unix_ms == 0) r.started_unix_ms = table_.NowMs();
  r.state = JobState::kRunning;
  r.state_reason = "running (its launch was found after an agent restart)";
  (void)table_.Save(entry);
  guard_.Update(table_);
  spdlog::info("job '{}' (run {}): adopted its launched session, pid {}", r.spec.name, r.run_id, r.pid);
  return true;
}

bool RunMonitor::BuildExitedLeavingProcesses(JobEntry& entry) {
  // A build ends with its own exit: what it left running (a daemon it
  // setsid'd, a compiler server) is reported and killed, not waited for,
  // or `gpuctl build --wait` would hang on it. A job being stopped is not:
  // its end is the stop's.
  JobRecord& r = entry.record;
  if (r.spec.kind != kJobKindBuild || r.stop_requested || r.pid <= 0) return false;
  // The wrapper alive is the usual case of a running build: asked first,
  // before the status file is read at every tick.
  sys::ProcessControl& control = processes_.control();
  if (control.Alive(r.pid) && (!r.pid_start_time || control.StartTime(r.pid) == r.pid_start_time)) {
    return false;  // still waiting for its command, or writing its end
  }
  if (ReadExitStatus(r.exit_path).kind != ExitStatusReading::Kind::kValue) return false;
  std::string left = "processes outside its command";
  if (processes_.cgroups() && !r.cgroup.empty()) {
    if (Result<std::vector<int64_t>> procs = processes_.cgroups()->Processes(r.cgroup); procs.ok()) {
      left.clear();
      for (int64_t pid : *procs) left += (left.empty() ? "pid " : ", ") + std::to_string(pid);
    }
  }
  const std::string message = "the build exited, leaving " + left + " running: killed";
  spdlog::warn("job '{}' (run {}): {}", r.spec.name, r.run_id, message);
  table_.PublishEvent(event_kind::kBuildLeftRunning, r, message, nlohmann::json::object());
  processes_.Signal(r, SIGKILL);
  return true;
}

namespace {

// A host job's --cwd that is no directory now (see RunEndFacts::cwd_gone).
std::optional<std::string> CwdGone(const JobSpec& spec) {
  if (spec.cwd.empty() || !spec.container.empty() || sys::IsDirectory(spec.cwd)) return std::nullopt;
  return spec.cwd;
}

}  // namespace

bool RunMonitor::SettleIfEnded(JobEntry& entry) {
  JobRecord& r = entry.record;
  if (r.state == JobState::kStarting && r.pid == 0 && r.started_unix_ms == 0) {
    // Recorded, but the agent stopped before it saw the launch. A launch an
    // old agent had in flight may still land (its tmux client outlives it):
    // look for the run's session for a while before calling it never run.
    if (AdoptLaunched(entry)) return false;
    if (table_.NowMs() - r.created_unix_ms < kLaunchGraceMs &&
        ReadExitStatus(r.exit_path).kind == ExitStatusReading::Kind::kMissing) {
      return false;
    }
  }
  if (processes_.Remain(r)) {
    if (r.state == JobState::kStarting && r.pid > 0) r.state = JobState::kRunning;
    if (!BuildExitedLeavingProcesses(entry)) return false;
  }
  const GuardView::EndMarks marks = guard_.TakeMarks(r.run_id);
  // A kill by the kernel within the run's own limit, read before its cgroup goes.
  std::optional<RunEndFacts::MemLimitKill> mem_limit_kill;
  if (sys::CgroupDriver* cgroups = processes_.cgroups(); cgroups && !r.cgroup.empty()) {
    Result<uint64_t> kills = cgroups->OomKillCount(r.cgroup);
    Result<std::optional<uint64_t>> limit = cgroups->MemoryLimit(r.cgroup);
    if (kills.ok() && *kills > 0 && limit.ok() && *limit) {
      mem_limit_kill = RunEndFacts::MemLimitKill{.limit_bytes = **limit, .from_flag = r.spec.mem_limit_bytes.has_value()};
    }
  }
  const JobEnd end = DecideRunEnd({.exit = ReadExitStatus(r.exit_path),
                                   .stop_requested = r.stop_requested,
                                   .guard_kill_reason = marks.guard_kill,
                                   .failure = marks.failure,
                                   .agent_stop_reason = r.agent_stop_reason,
                                   .never_seen_launched = r.state == JobState::kStarting && r.started_unix_ms == 0,
                                   .disk_full = DiskFullNote(r),
                                   .mem_limit_kill = mem_limit_kill,
                                   .cwd_gone = CwdGone(r.spec)});
  r.state = end.state;
  r.state_reason = end.reason;
  r.exit_code = end.exit_code;
  r.term_signal = end.term_signal;
  if (marks.guard_kill) r.guard_kill_reason = marks.guard_kill;
  if (r.state == JobState::kFailed) r.log_tail = ReadLogTail(r.log_path);
  r.ended_unix_ms = table_.NowMs();
  for (JobGpuMemory& gpu : r.gpu_memory) gpu.used_bytes = 0;  // the peaks stay
  spdlog::info("job '{}' (run {}) {}: {}", r.spec.name, r.run_id, JobStateName(r.state), r.state_reason);
  guard_.Update(table_);
  JobEndedEvent ended = JobEnded(r);
  table_.PublishEvent(ended.kind, r, ended.message, std::move(ended.fields));
  if (processes_.cgroups() && !r.cgroup.empty()) {
    if (Status s = processes_.cgroups()->RemoveCgroup(r.cgroup); !s.ok()) {
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

void RunMonitor::Refresh(JobEntry& entry, size_t ingest_bytes) {
  JobRecord& r = entry.record;
  if (r.state == JobState::kUnreadable) return unreadable_.Refresh(entry);
  const JobState state_before = r.state;
  const uint64_t offset_before = r.parsed_offset, bytes_before = r.log_bytes;
  bool deciding_added = false;
  auto on_event = [this, &deciding_added](const JobRecord& record, const LogEvent& e) {
    // A run may print thousands of tracebacks: those are the debug log's.
    const bool deciding = DecidesSomething(e);
    deciding_added = deciding_added || deciding;
    spdlog::log(deciding ? spdlog::level::info : spdlog::level::debug, "job '{}': {} at offset {}",
                record.spec.name, e.kind, e.offset);
    table_.PublishEvent(e.kind, record, e.message, ToJson(e));
  };
  const bool placed = processes_.PlaceContainerBuild(r);
  const bool found = processes_.FindInner(r);
  if (placed || found) {
    (void)table_.Save(entry);
    table_.Publish(entry);
    guard_.Update(table_);
  }
  const int64_t now = table_.NowMs();
  bool events_added = ingest_bytes > 0 && entry.ingest.Ingest(r, ingest_bytes, now, on_event);
  bool settled = IsActive(r.state) && SettleIfEnded(entry);
  // A job that just ended may have written its last lines after our read.
  if (settled && ingest_bytes > 0) events_added = entry.ingest.Ingest(r, ingest_bytes, now, on_event) || events_added;
  // Settled by a quick refresh (a follower's end check, a stop) that reads
  // nothing: the log's size now, so that the ticks read its last lines (an
  // OOM to remediate among them) instead of taking it as read.
  if (settled && ingest_bytes == 0 && !r.log_path.empty()) {
    if (Result<uint64_t> size = sys::RegularFileSize(r.log_path); size.ok()) r.log_bytes = *size;
    NoteBacklog(r);
  }
  bool parts_changed = false;
  for (JobPart* part : hooks_.all()) parts_changed = part->OnRefresh(table_, entry, now) || parts_changed;
  // An event that decides something (an OOM, an NCCL error) is saved at
  // once; the rest with the metrics, at most every 2 s (ProgressSaveDue): a
  // record saved per tick made a catch-up through a log of thousands of
  // tracebacks write and fsync the record thousands of times. After a crash
  // the unsaved ones are read again from the saved offset.
  const bool progress = table_.ProgressSaveDue(entry, now);
  if (settled || deciding_added || progress || parts_changed || r.state != state_before) (void)table_.Save(entry);
  if (settled || events_added || r.state != state_before || r.parsed_offset != offset_before ||
      r.log_bytes != bytes_before) {
    table_.Publish(entry);
  }
}

}  // namespace gpuctl::train
