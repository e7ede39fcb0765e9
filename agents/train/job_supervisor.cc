// The job supervisor's public side: calls posted to the owner thread,
// snapshots read by everyone, the guard's view, and the owner loop itself.
// What the owner does with jobs is in job_supervisor_ops.cc.
#include "agents/train/job_supervisor.h"

#include <algorithm>

#include <spdlog/spdlog.h>

namespace gpuctl::train {
namespace {

// How long a read waits for the owner before answering from the snapshot.
constexpr std::chrono::milliseconds kReadWait{200};
// How long a start or stop may sit in the queue behind other work.
constexpr std::chrono::milliseconds kCommandWait{60'000};
// Log bytes a read folds in before answering (the owner reads the rest).
constexpr size_t kReadIngestBytes = 4 << 20;
constexpr size_t kTickIngestBytes = 1 << 20;

Status Stopping() { return Unavailable("gpuctld is stopping or its job supervisor is busy; try again"); }

}  // namespace

struct JobSupervisor::Call {
  enum class Phase { kQueued, kRunning, kDone, kWithdrawn };
  explicit Call(std::function<void()> w) : work(std::move(w)) {}
  std::function<void()> work;
  std::mutex mutex;
  std::condition_variable done;
  Phase phase = Phase::kQueued;
};

JobSupervisor::JobSupervisor(JobSupervisorOptions options, sys::Tmux& tmux, sys::ProcessControl& processes,
                             sys::CommandRunner& runner, const sys::Clock& clock)
    : options_(std::move(options)),
      store_(options_.state_dir),
      tmux_(tmux),
      processes_(processes),
      clock_(clock),
      launcher_({.lxc_rootfs_template = options_.lxc_rootfs_template,
                 .container_state_dir = options_.container_state_dir,
                 .pct = options_.pct,
                 .cgroups = options_.cgroups,
                 .cgroup_parent = options_.cgroup_parent,
                 .default_mem_limit_bytes = options_.default_mem_limit_bytes,
                 .tmux_socket = options_.tmux_socket},
                store_, tmux, processes, runner) {}

JobSupervisor::~JobSupervisor() { Shutdown(); }

int64_t JobSupervisor::NowMs() const {
  return std::chrono::duration_cast<std::chrono::milliseconds>(clock_.WallNow().time_since_epoch()).count();
}

void JobSupervisor::Start() {
  Reconcile();  // before the owner thread exists, this thread is the owner
  {
    std::lock_guard lock(queue_mutex_);
    if (stopping_) return;
    owner_running_ = true;
  }
  next_tick_ = clock_.SteadyNow() + options_.monitor_interval;
  owner_ = std::thread([this] { OwnerLoop(); });
}

void JobSupervisor::Shutdown() {
  std::deque<std::shared_ptr<Call>> left;
  {
    // A stop waiting out its grace for a client answers now (the stop is
    // recorded: the next agent finishes it), so no call holds the agent.
    std::lock_guard lock(snapshot_mutex_);
    shutting_down_ = true;
  }
  {
    std::lock_guard lock(queue_mutex_);
    stopping_ = true;
    left.swap(queue_);
  }
  queue_wake_.notify_all();
  if (owner_.joinable()) owner_.join();
  for (const std::shared_ptr<Call>& call : left) {
    std::lock_guard lock(call->mutex);
    call->phase = Call::Phase::kWithdrawn;
    call->done.notify_all();
  }
  snapshot_changed_.notify_all();
}

bool JobSupervisor::RunOnOwner(std::function<void()> work, std::chrono::milliseconds queue_deadline) {
  auto call = std::make_shared<Call>(std::move(work));
  {
    std::lock_guard lock(queue_mutex_);
    if (stopping_) return false;
    if (!owner_running_) {
      // Before Start: the caller is the only one touching the table.
      call->work();
      return true;
    }
    queue_.push_back(call);
  }
  queue_wake_.notify_one();
  std::unique_lock lock(call->mutex);
  clock_.WaitUntil(lock, call->done, clock_.SteadyNow() + queue_deadline,
                   [&] { return call->phase != Call::Phase::kQueued; });
  if (call->phase == Call::Phase::kQueued) {
    call->phase = Call::Phase::kWithdrawn;  // the owner skips it
    return false;
  }
  call->done.wait(lock, [&] { return call->phase == Call::Phase::kDone || call->phase == Call::Phase::kWithdrawn; });
  return call->phase == Call::Phase::kDone;
}

void JobSupervisor::OwnerLoop() {
  std::unique_lock lock(queue_mutex_);
  while (!stopping_) {
    if (queue_.empty() && !backlog_) {
      auto wake_at = NextWake(clock_.SteadyNow());
      clock_.WaitUntil(lock, queue_wake_, wake_at, [&] { return stopping_ || !queue_.empty(); });
    }
    if (stopping_) break;
    std::deque<std::shared_ptr<Call>> calls;
    calls.swap(queue_);
    lock.unlock();
    for (const std::shared_ptr<Call>& call : calls) {
      {
        std::lock_guard call_lock(call->mutex);
        if (call->phase != Call::Phase::kQueued) continue;  // withdrawn
        call->phase = Call::Phase::kRunning;
      }
      call->work();
      std::lock_guard call_lock(call->mutex);
      call->phase = Call::Phase::kDone;
      call->done.notify_all();
    }
    // One reading of the clock for both sides: a deadline computed from a
    // later reading than the one it is compared with is never reached,
    // and the loop would spin instead of escalating the stop.
    const auto now = clock_.SteadyNow();
    if (backlog_ || now >= NextWake(now)) Tick();
    RemediateOoms();
    SampleGpuMemory();
    AdmitQueued();
    lock.lock();
  }
}

void JobSupervisor::Tick() {
  backlog_ = false;
  for (auto& [name, entry] : entries_) {
    const JobRecord& r = entry->record;
    if (!IsActive(r.state) && !LogIngest::Behind(r) && !(r.state == JobState::kUnreadable && r.stop_requested)) {
      continue;
    }
    Refresh(*entry, kTickIngestBytes);
    backlog_ = backlog_ || LogIngest::Behind(entry->record);
  }
  next_tick_ = clock_.SteadyNow() + options_.monitor_interval;
}

std::chrono::steady_clock::time_point JobSupervisor::NextWake(std::chrono::steady_clock::time_point now) {
  auto wake = next_tick_;
  // A stop escalates at its deadline, whatever the monitor interval.
  int64_t now_ms = NowMs();
  for (auto& [name, entry] : entries_) {
    const JobRecord& r = entry->record;
    if ((!IsActive(r.state) && r.state != JobState::kUnreadable) || !r.stop_requested || !r.stop_deadline_unix_ms) {
      continue;
    }
    // After the SIGKILL, look again soon: the job is about to be gone.
    auto at = entry->kill_sent
                  ? entry->recheck_at
                  : now + std::chrono::milliseconds(std::max<int64_t>(0, *r.stop_deadline_unix_ms - now_ms));
    wake = std::min(wake, at);
  }
  return wake;
}

// --- snapshots ---

void JobSupervisor::Publish(const Entry& entry) {
  auto copy = std::make_shared<const JobRecord>(entry.record);
  {
    std::lock_guard lock(snapshot_mutex_);
    snapshot_[entry.record.spec.name] = std::move(copy);
  }
  snapshot_changed_.notify_all();
}

void JobSupervisor::Unpublish(const std::string& name) {
  {
    std::lock_guard lock(snapshot_mutex_);
    snapshot_.erase(name);
    end_checked_at_.erase(name);
  }
  snapshot_changed_.notify_all();
}

std::shared_ptr<const JobRecord> JobSupervisor::Snapshot(const std::string& name) {
  std::lock_guard lock(snapshot_mutex_);
  auto it = snapshot_.find(name);
  return it == snapshot_.end() ? nullptr : it->second;
}

void JobSupervisor::WaitForEnd(const std::string& name, std::chrono::steady_clock::time_point deadline) {
  std::unique_lock lock(snapshot_mutex_);
  clock_.WaitUntil(lock, snapshot_changed_, deadline, [&] {
    auto it = snapshot_.find(name);
    // An unreadable record's run being stopped ends when its stop clears.
    return shutting_down_ || it == snapshot_.end() ||
           (!IsActive(it->second->state) &&
            !(it->second->state == JobState::kUnreadable && it->second->stop_requested));
  });
}

// --- the API ---

Result<JobRecord> JobSupervisor::StartJob(JobSpec spec) {
  if (Status s = ValidateJobSpec(spec); !s.ok()) return s;
  Result<JobRecord> result = Stopping();
  if (!RunOnOwner([&] { result = DoStart(std::move(spec)); }, kCommandWait)) return Stopping();
  return result;
}

Result<JobRecord> JobSupervisor::GetJob(const std::string& name) {
  // Fold in what the job did since the last tick; a busy owner is not
  // waited for long: the snapshot answers.
  RunOnOwner(
      [&] {
        auto it = entries_.find(name);
        if (it != entries_.end()) Refresh(*it->second, kReadIngestBytes);
      },
      kReadWait);
  std::shared_ptr<const JobRecord> record = Snapshot(name);
  if (!record) return NotFound("no job named '" + name + "' (see gpuctl train list)");
  return *record;
}

std::vector<JobRecord> JobSupervisor::ListJobs() {
  RunOnOwner(
      [&] {
        for (auto& [name, entry] : entries_) {
          if (IsActive(entry->record.state) || LogIngest::Behind(entry->record)) Refresh(*entry, kTickIngestBytes);
        }
      },
      kReadWait);
  std::vector<JobRecord> out;
  {
    std::lock_guard lock(snapshot_mutex_);
    for (const auto& [name, record] : snapshot_) out.push_back(*record);
  }
  std::sort(out.begin(), out.end(),
            [](const JobRecord& a, const JobRecord& b) { return a.created_unix_ms < b.created_unix_ms; });
  return out;
}

Result<JobRecord> JobSupervisor::StopJob(const std::string& name, std::chrono::milliseconds grace) {
  Result<JobRecord> begun = Stopping();
  if (!RunOnOwner([&] { begun = DoBeginStop(name, grace); }, kCommandWait)) return Stopping();
  if (!begun.ok() || (!IsActive(begun->state) && !begun->stop_requested)) return begun;
  WaitForEnd(name, clock_.SteadyNow() + grace + std::chrono::seconds(15));
  std::shared_ptr<const JobRecord> record = Snapshot(name);
  if (!record) return NotFound("job '" + name + "' was removed while it stopped");
  return *record;
}

Result<JobRecord> JobSupervisor::RemoveJob(const std::string& name) {
  Result<JobRecord> result = Stopping();
  if (!RunOnOwner([&] { result = DoRemove(name); }, kCommandWait)) return Stopping();
  return result;
}

Result<LogSource> JobSupervisor::GetLogSource(const std::string& name) {
  std::shared_ptr<const JobRecord> record = Snapshot(name);
  if (!record) return NotFound("no job named '" + name + "' (see gpuctl train list)");
  if (record->state == JobState::kQueued) {
    return FailedPrecondition("job '" + name + "' is queued (waiting for " + record->waiting_for +
                              "): it has no log until it starts");
  }
  if (IsActive(record->state) && EndCheckDue(name)) {
    // Followers ask at each end of file: only the cheap end-of-job check,
    // never log parsing, which the owner does on its own.
    RunOnOwner(
        [&] {
          auto it = entries_.find(name);
          if (it != entries_.end()) Refresh(*it->second, 0);
        },
        kReadWait);
    if (auto fresh = Snapshot(name)) record = fresh;
  }
  return LogSource{record->log_path, !IsActive(record->state)};
}

bool JobSupervisor::EndCheckDue(const std::string& name) {
  constexpr auto kEndCheckInterval = std::chrono::milliseconds(200);
  // Real time, not clock_: this only limits work, and a fake clock that
  // stands still must not stop followers from seeing an end.
  static const sys::RealClock real_clock;
  const auto now = real_clock.SteadyNow();
  std::lock_guard lock(snapshot_mutex_);
  auto [it, added] = end_checked_at_.try_emplace(name, now);
  if (added) return true;
  if (now - it->second < kEndCheckInterval) return false;
  it->second = now;
  return true;
}

// --- the guard's view ---

std::vector<GuardedJob> JobSupervisor::RunningJobs() {
  std::lock_guard lock(guard_mutex_);
  return guarded_;
}

void JobSupervisor::MarkKilledByGuard(const std::string& run_id, const std::string& reason) {
  std::lock_guard lock(guard_mutex_);
  guard_kills_[run_id] = reason;
}

void JobSupervisor::MarkFailed(const std::string& run_id, const std::string& reason) {
  std::lock_guard lock(guard_mutex_);
  failures_[run_id] = reason;
}

void JobSupervisor::UpdateGuarded() {
  std::vector<GuardedJob> running;
  for (auto& [name, entry] : entries_) {
    const JobRecord& r = entry->record;
    // A container job's memory is its command's, inside: guard that group.
    int64_t group = r.inner_pgid > 0 ? r.inner_pgid : r.pgid;
    if (IsActive(r.state)) {
      running.push_back({name, r.run_id, r.cgroup, group, r.spec.kind, r.spec.mem_limit_bytes,
                         r.spec.cwd.empty() ? options_.default_cwd : r.spec.cwd, r.stop_requested});
    }
  }
  std::lock_guard lock(guard_mutex_);
  guarded_ = std::move(running);
}

}  // namespace gpuctl::train
