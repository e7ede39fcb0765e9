// One process as the guard sees it: the facts victim choice needs, read from
// /proc by process_scan.h.
#pragma once

#include <cstdint>
#include <string>

namespace gpuctl::guard {

// PF_KTHREAD in the flags field (9) of /proc/PID/stat.
inline constexpr uint32_t kPfKthread = 0x00200000;

struct ProcessInfo {
  int64_t pid = 0;
  int64_t ppid = 0;
  std::string comm;             // /proc/PID/comm, at most 15 characters
  char state = '?';             // R S D Z ...
  uint32_t flags = 0;           // PF_* flags
  bool has_executable = false;  // /proc/PID/exe resolves
  uint64_t rss_bytes = 0;       // VmRSS
  int64_t oom_score = 0;        // the kernel's badness, 0..2000
  int64_t oom_score_adj = 0;    // -1000..1000; -1000: never OOM-killed
  // Its memory cgroup (v1 memory controller, else the v2 path), as
  // /proc/PID/cgroup shows it; empty when unreadable.
  std::string memory_cgroup{};

  bool kernel_thread() const { return (flags & kPfKthread) != 0 || !has_executable; }
  bool exited() const { return state == 'Z' || state == 'X'; }
};

}  // namespace gpuctl::guard
