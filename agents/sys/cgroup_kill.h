// The kill loop shared by both drivers: SIGKILL what a cgroup lists until it
// lists nothing, for cgroups without cgroup.kill (v1, v2 before Linux 5.14),
// and the wait after cgroup.kill where it exists.
#pragma once

#include <chrono>
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "common/status.h"

namespace gpuctl::sys {

class ProcessControl;

using ListProcesses = std::function<Result<std::vector<int64_t>>()>;

// Reads `list` and SIGKILLs every pid in it (with kSignal; kWaitOnly only
// waits, as after cgroup.kill) until it reads empty. Each round sends
// SIGKILL again to all listed pids, so a child forked between a read and a
// kill is caught in the next round; each pid seen for the first time then has
// its memory released by the caller (ProcessControl::ReleaseMemory), so the
// memory comes back while the processes exit, not after; when a round finds
// no new pid it sleeps 1 ms to let the dying exit instead of spinning.
//
// A pid read from cgroup.procs could in theory be reused by an unrelated
// process between the read and the kill; the window is microseconds and the
// same as any kill by pid (pidfds would close it).
//
// Errors: the list's error, the first error of ProcessControl::Signal (after
// the round is finished, so one refusal does not spare the others), and
// kUnavailable naming the survivors when `timeout` passes (processes stuck in
// the kernel, e.g. in uninterruptible I/O).
enum class KillMode { kSignal, kWaitOnly };
Status KillUntilEmpty(const ListProcesses& list, ProcessControl& processes, KillMode mode,
                      std::chrono::milliseconds timeout, const std::string& what);

}  // namespace gpuctl::sys
