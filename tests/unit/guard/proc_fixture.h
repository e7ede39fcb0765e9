// Builds /proc/PID entries in a TempDir as the kernel shows them, for the
// guard's scan and victim tests.
#pragma once

#include <cstdint>
#include <filesystem>
#include <string>

#include "tests/fakes/temp_dir.h"

namespace gpuctl::guard::testing {

struct FixtureProcess {
  int64_t pid = 0;
  std::string comm;
  int64_t ppid = 1;
  char state = 'S';
  uint32_t flags = 0x00400100;  // PF_RANDOMIZE | PF_SUPERPRIV: an ordinary process
  uint64_t rss_kib = 0;         // 0: no VmRSS line, as for kernel threads
  int64_t oom_score = 0;
  int64_t oom_score_adj = 0;
  bool exe = true;              // a resolving exe link
  std::string memory_cgroup{};  // written as a v2 /proc/PID/cgroup line when set
};

// flags of kthreadd and its children: PF_KTHREAD | PF_NOFREEZE | PF_FORKNOEXEC.
inline constexpr uint32_t kKernelThreadFlags = 0x00208040;

inline void WriteProcess(const gpuctl::testing::TempDir& dir, const FixtureProcess& p) {
  const std::string base = "proc/" + std::to_string(p.pid) + "/";
  // Fields 1..52 of proc(5); the ones the guard reads are real, the rest zero.
  std::string stat = std::to_string(p.pid) + " (" + p.comm + ") " + p.state + " " + std::to_string(p.ppid) + " " +
                     std::to_string(p.pid) + " " + std::to_string(p.pid) + " 0 -1 " + std::to_string(p.flags);
  for (int field = 10; field <= 52; ++field) {
    if (field == 20) stat += " 1";                                   // num_threads
    else if (field == 22) stat += " 4242";                           // starttime
    else if (field == 24) stat += " " + std::to_string(p.rss_kib / 4);  // rss pages
    else stat += " 0";
  }
  dir.WriteFile(base + "stat", stat + "\n");
  std::string status = "Name:\t" + p.comm + "\nState:\t" + std::string(1, p.state) + " (sleeping)\nPid:\t" +
                       std::to_string(p.pid) + "\nPPid:\t" + std::to_string(p.ppid) + "\n";
  if (p.rss_kib > 0) status += "VmRSS:\t" + std::to_string(p.rss_kib) + " kB\n";
  status += "Threads:\t1\n";
  dir.WriteFile(base + "status", status);
  dir.WriteFile(base + "oom_score", std::to_string(p.oom_score) + "\n");
  dir.WriteFile(base + "oom_score_adj", std::to_string(p.oom_score_adj) + "\n");
  if (p.exe) std::filesystem::create_symlink("/usr/bin/" + p.comm, dir.path() + "/" + base + "exe");
  if (!p.memory_cgroup.empty()) dir.WriteFile(base + "cgroup", "0::" + p.memory_cgroup + "\n");
}

}  // namespace gpuctl::guard::testing
