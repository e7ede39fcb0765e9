// What /proc offers beyond file contents: the list of pids, and whether a
// process has an executable (the exe link). Rooted at a HostFs so tests use
// fixture trees.
#pragma once

#include <cstdint>
#include <vector>

#include "agents/sys/host_fs.h"
#include "common/status.h"

namespace gpuctl::sys {

// The numeric entries of proc/, ascending. Errors: kNotFound (no proc),
// kPermissionDenied, kIo.
Result<std::vector<int64_t>> ListPids(const HostFs& fs);

// True when proc/PID/exe resolves (readlink succeeds). Kernel threads have no
// executable; neither do zombies, and processes we may not ptrace look the
// same (EACCES) -- callers treat "no exe" as "do not touch".
bool HasExecutable(const HostFs& fs, int64_t pid);

}  // namespace gpuctl::sys
