// Reads ProcessInfo from /proc through a HostFs (a fixture tree in tests):
// proc/PID/stat (comm, state, ppid, flags), status (VmRSS), oom_score,
// oom_score_adj, and whether proc/PID/exe resolves.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "agents/guard/process_info.h"
#include "agents/sys/host_fs.h"
#include "common/status.h"

namespace gpuctl::guard {

// The memory cgroup in a /proc/PID/cgroup text: the v1 memory
// controller's path, else the v2 (hierarchy 0) one; empty when neither.
std::string MemoryCgroupOf(std::string_view proc_cgroup);

// One process. Errors: kNotFound when it is gone, kInvalidArgument for a
// malformed file, and the HostFs read errors.
Result<ProcessInfo> ReadProcess(const sys::HostFs& fs, int64_t pid);

// Every process that could be read completely. A process that exits during
// the scan, or any of whose files cannot be read, is left out: what the guard
// cannot judge it does not kill. Errors: only when proc cannot be listed.
Result<std::vector<ProcessInfo>> ScanProcesses(const sys::HostFs& fs);

}  // namespace gpuctl::guard
