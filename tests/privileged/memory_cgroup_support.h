// What the privileged tests need of a real v1 memory hierarchy: where this
// process sits in it, a counter of a cgroup's file, and removing a test's
// cgroup tree with whatever still runs in it.
#pragma once

#include <cstdint>
#include <string>

#include "tests/fakes/temp_dir.h"  // ReadText

namespace gpuctl::testing {

inline const std::string kMemoryRoot = "/sys/fs/cgroup/memory";

// This process's cgroup in the v1 memory hierarchy ("/a/b"), "" at its root.
std::string OwnMemoryCgroup();
// The value after `key` in a "key value" file (memory.oom_control's
// "oom_kill", /proc/meminfo's "SwapTotal:"); 0 when absent.
uint64_t Counter(const std::string& file, const std::string& key);
// SIGKILLs what is in `dir` and below, and removes the cgroups.
void KillAndRemove(const std::string& dir);

}  // namespace gpuctl::testing
