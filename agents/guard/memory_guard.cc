#include "agents/guard/memory_guard.h"

#include <signal.h>

#include <spdlog/spdlog.h>

#include "agents/guard/process_scan.h"
#include "agents/sys/self_protection.h"
#include "common/event_kinds.h"
#include "common/units.h"

namespace gpuctl::guard {
namespace {

constexpr int64_t kWarningEveryMs = 10'000;
constexpr int64_t kProtectEveryMs = 10'000;

nlohmann::json PsiJson(const std::optional<double>& psi) {
  return psi ? nlohmann::json(*psi) : nlohmann::json(nullptr);
}

}  // namespace

MemoryGuard::MemoryGuard(GuardConfig config, MemoryGuardDeps deps,
                         std::unique_ptr<sys::MemoryPressureWaiter> waiter)
    : config_(std::move(config)),
      deps_(std::move(deps)),
      reader_(config_.domain, deps_.fs, deps_.cgroups),
      waiter_(std::move(waiter)) {}

MemoryGuard::~MemoryGuard() { Stop(); }

int64_t MemoryGuard::NowMs() const {
  return std::chrono::duration_cast<std::chrono::milliseconds>(deps_.clock.WallNow().time_since_epoch()).count();
}

void MemoryGuard::Start() {
  ProtectWayIn();
  thread_ = std::thread([this] { Loop(); });
}

void MemoryGuard::Stop() {
  {
    std::lock_guard lock(mutex_);
    stopping_ = true;
  }
  wake_.notify_all();
  if (thread_.joinable()) thread_.join();
}

void MemoryGuard::Loop() {
  sys::WarmStack();
  std::unique_lock lock(mutex_);
  while (!stopping_) {
    lock.unlock();
    const std::chrono::milliseconds interval = CheckOnce().poll;
    if (deps_.heartbeat) deps_.heartbeat();
    bool waited = false;
    if (waiter_) {
      // The kernel's event ends the wait early; the timeout is the backstop.
      Result<sys::WaitOutcome> woke = waiter_->Wait(interval);
      waited = woke.ok();
      if (!woke.ok()) {
        spdlog::warn("memory guard: event wait failed, polling only: {}", woke.status().message());
        waiter_.reset();
      }
    }
    lock.lock();
    if (!waited && !stopping_) wake_.wait_for(lock, interval, [&] { return stopping_; });
  }
}

void MemoryGuard::ProtectWayIn() {
  last_protect_ms_ = NowMs();
  Result<std::vector<ProcessInfo>> processes = ScanProcesses(deps_.fs);
  if (!processes.ok()) return;
  for (const ProcessInfo& p : *processes) {
    bool named = false;
    for (const std::string& n : config_.protected_names) named = named || p.comm == n;
    if (!named || p.oom_score_adj <= kProtectedOomScoreAdj) continue;
    if (Status s = sys::SetOomScoreAdj(deps_.fs, p.pid, kProtectedOomScoreAdj); !s.ok()) {
      spdlog::debug("cannot protect {} ({}): {}", p.comm, p.pid, s.message());
    }
  }
}

std::vector<Candidate> MemoryGuard::Candidates() {
  std::vector<Candidate> out;
  for (const GuardedWorkItem& item : deps_.work.Running()) {
    Candidate c{item.name, item.cgroup, item.pgid, 0};
    if (deps_.cgroups && !item.cgroup.empty()) {
      c.memory_bytes = deps_.cgroups->MemoryCurrent(item.cgroup).value_or(0);
    } else if (item.pgid > 0) {
      Result<ProcessInfo> p = ReadProcess(deps_.fs, item.pgid);
      if (p.ok()) c.memory_bytes = p->rss_bytes;
    }
    out.push_back(std::move(c));
  }
  return out;
}

WakePlan MemoryGuard::CheckOnce() {
  auto at = deps_.clock.SteadyNow();
  int64_t at_ms = NowMs();
  Result<DomainReading> reading = reader_.Read();
  if (!reading.ok()) {
    spdlog::warn("memory guard: cannot read the domain: {}", reading.status().message());
    return WakePlan{.usage_lines = {}, .poll = config_.poll_interval};
  }
  GuardDecision decision = Decide(*reading, config_);
  WakePlan plan = PlanWake(*reading, decision, config_);
  if (waiter_) {
    // Armed before acting: a kill's wait must not leave the line unwatched.
    if (Status armed = waiter_->ArmAt(plan.usage_lines); !armed.ok()) {
      spdlog::warn("memory guard: cannot move the kernel wake-up, polling only: {}", armed.message());
      waiter_.reset();
    }
  }
  if (decision.action != GuardAction::kKill) relieving_.clear();  // back above the line
  if (decision.action == GuardAction::kKill) {
    Kill(*reading, decision, at, at_ms);
  } else if (decision.action == GuardAction::kWarn && at_ms - last_warning_ms_ >= kWarningEveryMs) {
    last_warning_ms_ = at_ms;
    deps_.publish({event_kind::kGuardWarning, "", decision.reason,
                   {{"available_bytes", decision.available_bytes},
                    {"warn_below_bytes", decision.warn_below_bytes},
                    {"kill_below_bytes", decision.kill_below_bytes},
                    {"psi_full_avg10", PsiJson(reading->psi_full_avg10)}}});
  }
  if (at_ms - last_protect_ms_ >= kProtectEveryMs) ProtectWayIn();  // sshd may have restarted
  return plan;
}

void MemoryGuard::Kill(const DomainReading& crossed, const GuardDecision& decision,
                       std::chrono::steady_clock::time_point crossed_at, int64_t crossed_unix_ms) {
  std::vector<ProcessInfo> unmanaged;
  if (config_.guard_unmanaged) {
    Result<std::vector<ProcessInfo>> scanned = ScanProcesses(deps_.fs);
    if (scanned.ok()) unmanaged = WithinDomain(*scanned, config_.domain);
  }
  std::optional<Victim> victim = ChooseVictim(Candidates(), unmanaged, config_, deps_.agent_pid);
  if (!victim) {
    if (crossed_unix_ms - last_no_victim_ms_ >= kWarningEveryMs) {
      last_no_victim_ms_ = crossed_unix_ms;
      deps_.publish({event_kind::kGuardNoVictim, "",
                     decision.reason + "; nothing the guard may kill (see --guard-unmanaged)",
                     {{"available_bytes", decision.available_bytes}}});
    }
    return;
  }
  // A governed build pauses its compiles before it is killed: the governor
  // can still stop its growth, and its work is kept. Not for long.
  if (victim->kind == Victim::Kind::kManagedJob) {
    const auto now = deps_.clock.SteadyNow();
    if (relieving_ != victim->name) {
      relieving_ = victim->name;
      relieving_since_ = now;
    }
    if (now - relieving_since_ < kReliefWindow && deps_.work.Relieve(victim->name)) {
      spdlog::info("memory guard: {}; build '{}' pauses its compiles first", decision.reason, victim->name);
      return;
    }
  }
  relieving_.clear();
  std::string reason = decision.reason + "; killed " + victim->name + " using " + FormatBytes(victim->memory_bytes);
  Status killed;
  if (victim->kind == Victim::Kind::kManagedJob) {
    deps_.work.WillKill(victim->name, "killed by the memory guard: " + decision.reason);
    if (deps_.cgroups && !victim->cgroup.empty()) {
      killed = deps_.cgroups->KillAll(victim->cgroup);
    } else {
      killed = deps_.processes.SignalGroup(victim->pid, SIGKILL);
      while (killed.ok() && deps_.processes.GroupAlive(victim->pid) &&
             deps_.clock.SteadyNow() - crossed_at < std::chrono::seconds(2)) {
        sys::SleepFor(deps_.clock, std::chrono::milliseconds(1));
      }
    }
  } else {
    killed = deps_.processes.Signal(victim->pid, SIGKILL);
    if (killed.ok()) (void)deps_.processes.ReleaseMemory(victim->pid);
    while (killed.ok() && deps_.processes.Alive(victim->pid) &&
           deps_.clock.SteadyNow() - crossed_at < std::chrono::seconds(2)) {
      sys::SleepFor(deps_.clock, std::chrono::milliseconds(1));
    }
  }
  auto dead_at = deps_.clock.SteadyNow();
  int64_t dead_unix_ms = NowMs();
  Result<DomainReading> after = reader_.Read();
  double reaction_ms = std::chrono::duration<double, std::milli>(dead_at - crossed_at).count();
  uint64_t available_after = after.ok() ? after->available_bytes : 0;
  uint64_t freed = available_after > crossed.available_bytes ? available_after - crossed.available_bytes : 0;
  nlohmann::json fields = {
      {"crossed_unix_ms", crossed_unix_ms},
      {"dead_unix_ms", dead_unix_ms},
      {"reaction_ms", reaction_ms},
      {"available_at_cross_bytes", crossed.available_bytes},
      {"available_after_bytes", available_after},
      {"kill_below_bytes", decision.kill_below_bytes},
      {"psi_full_avg10_at_cross", PsiJson(crossed.psi_full_avg10)},
      {"psi_full_avg10_after", after.ok() ? PsiJson(after->psi_full_avg10) : nlohmann::json(nullptr)},
      {"victim_kind", victim->kind == Victim::Kind::kManagedJob ? "job" : "process"},
      {"victim", victim->name},
      {"victim_pid", victim->pid},
      {"victim_cgroup", victim->cgroup},
      {"victim_memory_bytes", victim->memory_bytes},
      {"freed_bytes", freed},
      {"killed", killed.ok()},
  };
  if (!killed.ok()) fields["kill_error"] = killed.message();
  spdlog::warn("memory guard: {} ({:.1f} ms from the line to dead)", reason, reaction_ms);
  deps_.publish(
      {event_kind::kGuardKill, victim->kind == Victim::Kind::kManagedJob ? victim->name : "", reason, fields});
}

}  // namespace gpuctl::guard
