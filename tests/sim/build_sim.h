// A trace-replay simulator of a parallel CUDA-extension build: compiles
// whose memory and CPU follow recorded nvcc traces, started by a ninja-like
// scheduler with a MAX_JOBS, on a host with so many cores and so much
// memory. Governed runs hand every tick to build::BuildGovernor, the class
// the agent runs, so the simulator measures the agent's own decisions.
// Pure: no clock, no processes.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "agents/build/memory_curve.h"
#include "common/status.h"

namespace gpuctl::sim {

inline constexpr double kTickSeconds = 0.25;  // the traces' sampling, and the agent's

// One compile job: its memory and the cores it keeps busy, per tick of its
// own progress (a job that gets less CPU takes more ticks to go through it).
struct SimCompile {
  std::string source;
  uint32_t archs = 1;
  uint32_t threads = 1;
  std::vector<uint64_t> rss_bytes;
  std::vector<uint32_t> cores;
};

struct SimHost {
  uint32_t cores = 0;
  uint64_t available_bytes = 0;  // what the build can use before the kernel OOMs
  uint64_t reserve_bytes = 0;    // the guard's; a governed build's budget is available - reserve
};

struct SimRun {
  std::string label;
  uint32_t max_jobs = 1;
  bool governed = false;
  // Peaks of an earlier build, by build::HistoryKey: a rebuild of the same tree.
  std::map<std::string, uint64_t> history = {};
  std::map<std::string, double> history_seconds = {};  // and how long each ran
  std::map<std::string, build::CompileCurve> history_curves = {};  // and their memory over time
  // The clairvoyant schedule (clairvoyant.h) instead of ninja's order.
  bool clairvoyant = false;
};

struct SimResult {
  std::string label;
  uint32_t max_jobs = 0;
  bool governed = false;
  bool oom = false;          // the build's memory passed what was available
  double oom_at_s = 0;
  bool failed = false;       // the governor gave up (a compile could not fit)
  double makespan_s = 0;     // when the last compile ended (or the OOM/failure)
  uint64_t peak_bytes = 0;
  double paused_s = 0;  // compile-seconds spent paused
  uint64_t pauses = 0;
  std::map<std::string, uint64_t> learned = {};  // governed: each compile's peak, for a rebuild
  std::map<std::string, double> learned_seconds = {};  // and how long it ran
  std::map<std::string, build::CompileCurve> learned_curves = {};  // and its memory over time
  std::vector<double> started_s = {};  // by index in the input: when it started; -1: never
};

SimResult Simulate(const std::vector<SimCompile>& compiles, const SimHost& host, const SimRun& run);

// max(CPU-seconds / cores, memory-seconds / budget, the longest compile):
// no schedule can finish sooner.
struct LowerBound {
  double cpu_s = 0, memory_s = 0, longest_s = 0;
  double bound_s() const;
};
LowerBound ComputeLowerBound(const std::vector<SimCompile>& compiles, const SimHost& host);

// One arch of one compile, from a recorded trace: memory per tick.
using ArchProfile = std::vector<uint64_t>;
// Every job of a memtrace CSV (nvcc_memtrace.h), resampled to ticks.
Result<std::map<std::string, ArchProfile>> ProfilesFromTrace(std::string_view csv);

// A compile of `archs` archs on `threads` nvcc threads built from one arch's
// profile: the archs run `min(threads, archs)` at a time, in waves, each
// wave's memory the sum of its archs'.
SimCompile ComposeCompile(const std::string& source, const ArchProfile& one_arch, uint32_t archs, uint32_t threads);

// flash-attn 2.8's kernel files (csrc/flash_attn/src/*.cu): fwd, bwd and
// fwd_split for head dims 32-256, fp16 and bf16, causal or not, in the order
// its setup.py lists them (ninja's order).
std::vector<std::string> FlashAttnKernelFiles();
// The recorded trace that stands for a kernel file: the same direction and
// the nearest head dim the traces have (bwd 64/128/256, fwd 128/256).
std::string TraceJobFor(const std::string& kernel_file);

}  // namespace gpuctl::sim

namespace gpuctl::sim {

// The incident host: 128 cores, 288 GiB, of which the OS and sshd hold
// 6 GiB; the guard's default reserve (3%).
SimHost IncidentHost();

// flash-attn's 72 kernel files for `archs` archs on `threads` nvcc threads,
// each from the trace TraceJobFor names. Errors: a trace job is missing.
Result<std::vector<SimCompile>> FlashAttnBuild(const std::map<std::string, ArchProfile>& profiles, uint32_t archs,
                                               uint32_t threads);

// The schedules the README compares: fixed MAX_JOBS 128, 64 and 32;
// flash-attn's own formula min(cores/2, available GiB/(5 x threads)); the
// static model (provision::EstimateMaxJobs); the live governor with
// MAX_JOBS = cores: it, not ninja, holds back what does not fit, and a
// compile in a one-lane wave or tail leaves cores a waiting one can use;
// and the clairvoyant schedule, the bar for the others.
std::vector<SimRun> IncidentRuns(const SimHost& host, uint32_t archs, uint32_t threads);

}  // namespace gpuctl::sim
