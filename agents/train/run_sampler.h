// A run's processes as hang detection and its dumps see them: each one's
// CPU time, state, command line and torch rank. An interface, so the hang
// watch is tested with made-up processes; the real one reads /proc.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include <chrono>
#include <map>

#include "agents/sys/cgroup_driver.h"
#include "agents/sys/clock.h"
#include "agents/sys/proc_stat.h"
#include "agents/sys/host_fs.h"
#include "agents/train/job_record.h"

namespace gpuctl::train {

struct RunProcess {
  int64_t pid = 0;
  std::string comm;
  char state = '?';          // as /proc/PID/stat has it: 'T' is stopped
  uint64_t cpu_ticks = 0;    // user + system, in clock ticks
  std::vector<std::string> argv;
  std::optional<int> rank;   // RANK in its environment (torchrun sets it)
  bool operator==(const RunProcess&) const = default;
};

class RunSampler {
 public:
  virtual ~RunSampler() = default;
  // Every process of the run now: its cgroup's, its process group's, and a
  // container job's command's group. Empty when none can be read.
  // `details`: argv and rank too (a dump's; a sample each second needs
  // only the CPU time).
  virtual std::vector<RunProcess> Sample(const JobRecord& record, bool details) = 0;
};

// Reads proc/ under `fs` (fixture trees in tests). `cgroups` null: runs have
// no cgroup of their own. One scan of proc/ serves every run sampled within
// kScanReuse of it: a pass over 20 jobs reads each process's stat once, not
// 20 times. Used from one thread at a time (the owner's; a dump's details
// are read there too).
class ProcRunSampler final : public RunSampler {
 public:
  static constexpr std::chrono::milliseconds kScanReuse{200};
  ProcRunSampler(const sys::HostFs& fs, sys::CgroupDriver* cgroups, const sys::Clock& clock);
  std::vector<RunProcess> Sample(const JobRecord& record, bool details) override;

 private:
  const std::map<int64_t, sys::ProcStat>& Scan();

  const sys::HostFs& fs_;
  sys::CgroupDriver* cgroups_;
  const sys::Clock& clock_;
  std::map<int64_t, sys::ProcStat> stats_;
  std::optional<std::chrono::steady_clock::time_point> scanned_at_;
};

// The words of a NUL-separated proc file (cmdline, environ).
std::vector<std::string> SplitNulFields(const std::string& text);

}  // namespace gpuctl::train
