// What keeps the agent reachable when memory runs out: its pages locked in
// RAM, the kernel told never to pick it, and the way in (sshd) kept too.
#pragma once

#include <cstdint>

#include "agents/sys/host_fs.h"
#include "common/status.h"

namespace gpuctl::sys {

int64_t SelfPid();

// Touches `bytes` of this thread's stack so those pages exist before they
// are locked: a thread that faults in stack under memory pressure stalls.
void WarmStack(size_t bytes = 256 * 1024);

// mlockall(MCL_CURRENT | MCL_FUTURE | MCL_ONFAULT): what the agent has, and
// what it touches later, stays in RAM. Errors: kPermissionDenied without
// CAP_IPC_LOCK or enough RLIMIT_MEMLOCK.
Status LockAllMemory();

// Gives memory the agent freed back to the system (malloc_trim), also when
// it is locked. For after a burst, e.g. the last of many log streams closed.
void ReturnFreedMemory();

// Writes /proc/PID/oom_score_adj (-1000..1000).
Status SetOomScoreAdj(const HostFs& fs, int64_t pid, int adj);

// The agent's own pid (`agent_pid`) set to -1000: the kernel's OOM killer
// never picks it. The error says whose it is and what is lost without it
// (the agent, and the memory guard that would have stopped a job first).
Status ProtectAgentFromOomKiller(const HostFs& fs, int64_t agent_pid);

}  // namespace gpuctl::sys
