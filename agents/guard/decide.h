// The guard's decisions, as pure functions: whether to act on a domain
// reading, and whom to kill. No reads, no clocks: the loop feeds them.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "agents/guard/guard_config.h"
#include "agents/guard/memory_domain.h"
#include "agents/guard/process_info.h"

namespace gpuctl::guard {

enum class GuardAction { kNone, kWarn, kKill };
const char* GuardActionName(GuardAction action);  // "none", "warn", "kill"

struct GuardDecision {
  GuardAction action = GuardAction::kNone;
  uint64_t available_bytes = 0;
  uint64_t kill_below_bytes = 0;  // the reserve
  uint64_t warn_below_bytes = 0;  // reserve + margin
  std::string reason;             // for events and logs; empty with kNone
};

// kKill when available memory is below the reserve; kWarn when it is below
// the warn line, or PSI full avg10 reaches the configured stall/window
// percentage; else kNone. Lines are computed against reading.total_bytes.
GuardDecision Decide(const DomainReading& reading, const GuardConfig& config);

// A job or build gpuctl launched, with the memory of its cgroup.
struct Candidate {
  std::string name;    // job name
  std::string cgroup;  // its cgroup, killed whole
  int64_t pid = 0;     // its leader, 0 when unknown
  uint64_t memory_bytes = 0;
};

struct Victim {
  enum class Kind { kManagedJob, kUnmanagedProcess };
  Kind kind = Kind::kManagedJob;
  std::string name;    // job name, or the process's comm
  std::string cgroup;  // kManagedJob: the cgroup to kill
  int64_t pid = 0;     // kUnmanagedProcess: the process to kill
  uint64_t memory_bytes = 0;
  std::string reason;
};

// Why the guard must never kill `process`, or nullopt when it may: pid 1 and
// invalid pids, kernel threads (PF_KTHREAD or no executable), the agent itself
// (`agent_pid`), protected names (exact comm match), oom_score_adj -1000 (the
// kernel's own "never kill"), and exited processes (nothing to free).
std::optional<std::string> WhyProtected(const ProcessInfo& process, const GuardConfig& config, int64_t agent_pid);

// The managed job using the most memory goes first (ties: by name, so the
// choice is repeatable). Only when no managed job holds memory, and only with
// guard_unmanaged, the unprotected process with the highest oom_score (ties:
// larger RSS, then lower pid). `unmanaged` should hold processes outside the
// managed jobs' cgroups. nullopt: nothing may be killed.
// The processes inside `domain`: all for the host; for a cgroup domain those
// whose memory cgroup is the domain's or below it. Killing a process outside
// the domain frees nothing in it.
std::vector<ProcessInfo> WithinDomain(const std::vector<ProcessInfo>& processes, const GuardDomain& domain);

std::optional<Victim> ChooseVictim(const std::vector<Candidate>& managed, const std::vector<ProcessInfo>& unmanaged,
                                   const GuardConfig& config, int64_t agent_pid);

}  // namespace gpuctl::guard
