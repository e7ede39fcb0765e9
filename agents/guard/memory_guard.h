// The guard loop: watches the domain's available memory and kills the
// biggest managed job the moment it drops below the reserve, before the
// kernel's OOM killer or thrashing takes the host (and SSH) down.
//
// It wakes on kernel events where there are any (a PSI trigger, v1 usage
// thresholds re-armed at its own lines after every reading) and polls as a
// backstop: every `poll_interval` (<= 100 ms) while far from the kill line,
// faster as the line nears (the time 8 GiB/s of growth takes to reach it),
// every 5 ms below the warn line, since at GiB/s a 100 ms sleep is the
// difference between a clean kill and the kernel's OOM killer (wake_plan.h).
// One thread owns it all; one victim at a time, re-reading before the next.
#pragma once

#include <chrono>
#include <condition_variable>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include <nlohmann/json.hpp>

#include "agents/guard/decide.h"
#include "agents/guard/guard_config.h"
#include "agents/guard/memory_domain.h"
#include "agents/guard/wake_plan.h"
#include "agents/sys/cgroup_driver.h"
#include "agents/sys/clock.h"
#include "agents/sys/host_fs.h"
#include "agents/sys/memory_pressure_waiter.h"
#include "agents/sys/process_control.h"

namespace gpuctl::guard {

struct GuardedWorkItem {
  std::string name;
  std::string cgroup;  // empty: killed by process group
  int64_t pgid = 0;
};

// The work the guard may kill: jobs and builds the agent started.
class GuardedWork {
 public:
  virtual ~GuardedWork() = default;
  virtual std::vector<GuardedWorkItem> Running() = 0;
  // Called just before the kill, so the job ends as killed_by_guard.
  virtual void WillKill(const std::string& name, const std::string& reason) = 0;
  // A governed build can still stop growing by pausing compiles: asks its
  // governor to pause all but one now and returns true; the guard then
  // holds its kill a moment (kReliefWindow). False: nothing left to pause.
  virtual bool Relieve(const std::string& /*name*/) { return false; }
};

// How long the guard holds its kill while a governed build pauses its
// compiles: a few governor ticks. Past it, the line wins.
inline constexpr std::chrono::milliseconds kReliefWindow{1000};

struct GuardEvent {
  std::string kind;  // guard_kill, guard_warning, guard_no_victim, guard_started
  std::string job;
  std::string message;
  nlohmann::json fields = nlohmann::json::object();
};

struct MemoryGuardDeps {
  const sys::HostFs& fs;
  sys::CgroupDriver* cgroups;  // may be null (no cgroups here)
  sys::ProcessControl& processes;
  const sys::Clock& clock;
  GuardedWork& work;
  std::function<void(GuardEvent)> publish;
  std::function<void()> heartbeat;  // once per loop: the systemd watchdog
  int64_t agent_pid = 0;
};

class MemoryGuard {
 public:
  MemoryGuard(GuardConfig config, MemoryGuardDeps deps, std::unique_ptr<sys::MemoryPressureWaiter> waiter);
  ~MemoryGuard();

  void Start();
  void Stop();  // prompt: at most one poll interval. Idempotent.

  // One look: read, decide, act, and arm the kernel's wake-up at the lines
  // from this reading. Returns when to look next at the latest (the poll).
  // The loop calls it; tests may too.
  WakePlan CheckOnce();

  // Processes named in config.protected_names get this oom_score_adj.
  static constexpr int kProtectedOomScoreAdj = -900;
  void ProtectWayIn();

 private:
  void Loop();
  void Kill(const DomainReading& crossed, const GuardDecision& decision,
            std::chrono::steady_clock::time_point crossed_at, int64_t crossed_unix_ms);
  std::vector<Candidate> Candidates();
  int64_t NowMs() const;

  GuardConfig config_;
  MemoryGuardDeps deps_;
  MemoryDomainReader reader_;
  std::unique_ptr<sys::MemoryPressureWaiter> waiter_;
  int64_t last_warning_ms_ = 0;
  int64_t last_no_victim_ms_ = 0;
  int64_t last_protect_ms_ = 0;
  // A governed build asked to pause instead of being killed: since when (0: none).
  std::string relieving_;
  std::chrono::steady_clock::time_point relieving_since_{};

  std::mutex mutex_;
  std::condition_variable wake_;
  bool stopping_ = false;
  std::thread thread_;
};

}  // namespace gpuctl::guard
