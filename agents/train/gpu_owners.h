// Whose a GPU process is, as the job table knows it: a running job's by its
// process group or its cgroup (a worker that called setsid stays its job's),
// a container job's by its container's cgroup, a run that just ended (or the
// run before the current one) by the pids seen of it. NVML reports host
// pids, and a container job's group is kept by its host pid.
#pragma once

#include <cstdint>
#include <functional>
#include <optional>

#include "agents/sys/process_control.h"
#include "agents/train/gpu_placement.h"
#include "agents/train/job_table.h"

namespace gpuctl::train {

// Pids remembered per run: a run has a few workers per GPU.
inline constexpr size_t kMaxGpuPidsPerRun = 1024;

// A snapshot of the table's jobs, asked per pid (the process's group and
// cgroup are read when asked).
std::function<std::optional<GpuProcessOwner>(uint32_t pid)> GpuOwnersOf(const JobTable& table,
                                                                         sys::ProcessControl& processes);

}  // namespace gpuctl::train
