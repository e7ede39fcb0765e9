// /proc/<pid>/stat, parsed apart from reading it (HostFs reads it).
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include "common/status.h"

namespace gpuctl::sys {

// The fields gpuctl uses; numbers are the 1-based field numbers of proc(5).
struct ProcStat {
  int64_t pid = 0;                // 1
  std::string comm;               // 2, without the parentheses
  char state = '?';               // 3: R S D Z T t X I ...
  int64_t ppid = 0;               // 4
  int64_t pgrp = 0;               // 5
  int64_t session = 0;            // 6
  uint32_t flags = 0;             // 9: PF_* (PF_KTHREAD: a kernel thread)
  uint64_t utime_ticks = 0;       // 14
  uint64_t stime_ticks = 0;       // 15
  int64_t num_threads = 0;        // 20
  uint64_t start_time_ticks = 0;  // 22: clock ticks after boot
  uint64_t vsize_bytes = 0;       // 23
  int64_t rss_pages = 0;          // 24
  // 26-28: where the address space's code and stack are. Zero when the
  // line stops before them; a reader the kernel does not let see them
  // (another user's process, unprivileged) reads 1, 1 and 0.
  uint64_t start_code = 0;   // 26
  uint64_t end_code = 0;     // 27
  uint64_t start_stack = 0;  // 28

  // Zombie ('Z') or dead ('X'): the process has exited and only waits to be
  // reaped, so it holds no memory and runs nothing.
  bool exited() const { return state == 'Z' || state == 'X'; }
};

// The comm field is the program name in parentheses and may itself contain
// spaces and ')' (a process may name itself anything), so the fields after it
// are found from the LAST ')'. Errors: kInvalidArgument when the text is not
// a stat line or a field up to rss is missing or not a number.
Result<ProcStat> ParseProcStat(std::string_view text);

}  // namespace gpuctl::sys

namespace gpuctl::sys {
// The kernel's page size: the unit of ProcStat::rss_pages.
uint64_t PageBytes();
// Clock ticks per second: the unit of ProcStat's utime and stime.
long ClockTicksPerSecond();
}  // namespace gpuctl::sys
