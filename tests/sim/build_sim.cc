#include "tests/sim/build_sim.h"

#include <algorithm>
#include <cmath>

#include "agents/build/build_governor_policy.h"
#include "agents/provision/nvcc_memtrace.h"
#include "tests/sim/clairvoyant.h"

namespace gpuctl::sim {
namespace {

struct Active {
  const SimCompile* compile = nullptr;
  std::string id;
  double progress = 0;  // ticks of its profile done
  bool paused = false;
  size_t Tick() const { return std::min(static_cast<size_t>(progress), compile->rss_bytes.size() - 1); }
};

}  // namespace

double LowerBound::bound_s() const { return std::max({cpu_s, memory_s, longest_s}); }

SimResult Simulate(const std::vector<SimCompile>& compiles, const SimHost& host, const SimRun& run) {
  SimResult result{.label = run.label, .max_jobs = run.max_jobs, .governed = run.governed};
  const uint64_t budget = host.available_bytes > host.reserve_bytes ? host.available_bytes - host.reserve_bytes : 0;
  build::BuildGovernor governor({.budget_bytes = budget, .headroom_bytes = build::DefaultHeadroom(budget),
                                 .nvcc_peak_one_arch_bytes = build::kNvccPeakOneArchBytes,
                                 .unknown_floor_bytes = uint64_t{1} << 30, .tick_seconds = kTickSeconds,
                                 .cores = host.cores},
                                run.history, run.history_seconds, run.history_curves);
  std::vector<Active> active;
  std::vector<size_t> order(compiles.size());
  for (size_t i = 0; i < order.size(); ++i) order[i] = i;  // ninja's
  if (run.clairvoyant) order = LongestFirst(compiles);
  result.started_s.assign(compiles.size(), -1);
  size_t next = 0;
  double now = 0;
  while (next < order.size() || !active.empty()) {
    // ninja: a finished job's slot goes to the next one at once.
    while (active.size() < run.max_jobs && next < order.size()) {
      const SimCompile& candidate = compiles[order[next]];
      if (run.clairvoyant) {
        std::vector<RunningTrace> running;
        for (const Active& job : active) running.push_back({&job.compile->rss_bytes, job.progress});
        if (!FitsExactly(running, candidate.rss_bytes, budget)) break;
      }
      result.started_s[order[next]] = now;
      active.push_back({&candidate, std::to_string(order[next]), 0, false});
      ++next;
    }
    if (active.empty()) {
      result.failed = true;  // the clairvoyant's next compile cannot fit even alone
      break;
    }
    uint32_t demand = 0;
    for (const Active& job : active) {
      if (!job.paused) demand += job.compile->cores[job.Tick()];
    }
    double speed = demand > host.cores ? static_cast<double>(host.cores) / demand : 1.0;
    for (Active& job : active) {
      if (job.paused) {
        result.paused_s += kTickSeconds;
      } else {
        job.progress += speed;
        // Snap sums of shared-core speeds (2/7 + 5/7) to the whole tick they
        // make: compiles must stay a fixed number of ticks apart (clairvoyant.h).
        if (std::abs(job.progress - std::round(job.progress)) < 1e-9) job.progress = std::round(job.progress);
      }
    }
    now += kTickSeconds;
    std::erase_if(active, [](const Active& job) { return job.progress >= static_cast<double>(job.compile->rss_bytes.size()); });

    uint64_t in_use = 0;
    for (const Active& job : active) in_use += job.compile->rss_bytes[job.Tick()];
    result.peak_bytes = std::max(result.peak_bytes, in_use);
    if (in_use > host.available_bytes) {
      result.oom = true;
      result.oom_at_s = now;
      break;
    }
    if (!run.governed) continue;
    std::vector<build::TreeSample> samples;
    for (const Active& job : active) {
      samples.push_back({.id = job.id, .program = "nvcc", .source = job.compile->source, .archs = job.compile->archs,
                         .threads = job.compile->threads, .rss_bytes = job.compile->rss_bytes[job.Tick()],
                         .stopped = false, .device_compiles_done = std::nullopt,
                         .busy = job.paused ? 0 : job.compile->cores[job.Tick()]});
    }
    build::GovernorDecision decision = governor.Tick(samples, 0);
    for (const build::FinishedCompile& done : governor.TakeFinished()) {
      result.learned[done.source] = done.peak_bytes;
      result.learned_seconds[done.source] = done.run_seconds;
      result.learned_curves[done.source] = done.curve;
    }
    for (Active& job : active) {
      if (std::find(decision.pause.begin(), decision.pause.end(), job.id) != decision.pause.end()) job.paused = true;
      if (std::find(decision.resume.begin(), decision.resume.end(), job.id) != decision.resume.end()) job.paused = false;
    }
    if (decision.fail) {
      result.failed = true;
      break;
    }
  }
  result.makespan_s = now;
  result.pauses = governor.pauses();
  if (run.governed && !result.oom && !result.failed) {
    governor.Tick({}, 0);  // the last compiles ended
    for (const build::FinishedCompile& done : governor.TakeFinished()) {
      result.learned[done.source] = done.peak_bytes;
      result.learned_seconds[done.source] = done.run_seconds;
      result.learned_curves[done.source] = done.curve;
    }
  }
  return result;
}

LowerBound ComputeLowerBound(const std::vector<SimCompile>& compiles, const SimHost& host) {
  LowerBound bound;
  const uint64_t budget = host.available_bytes > host.reserve_bytes ? host.available_bytes - host.reserve_bytes : 1;
  double core_ticks = 0, byte_ticks = 0;
  for (const SimCompile& compile : compiles) {
    for (uint32_t cores : compile.cores) core_ticks += cores;
    for (uint64_t bytes : compile.rss_bytes) byte_ticks += static_cast<double>(bytes);
    bound.longest_s = std::max(bound.longest_s, static_cast<double>(compile.rss_bytes.size()) * kTickSeconds);
  }
  bound.cpu_s = core_ticks * kTickSeconds / host.cores;
  bound.memory_s = byte_ticks * kTickSeconds / static_cast<double>(budget);
  return bound;
}

Result<std::map<std::string, ArchProfile>> ProfilesFromTrace(std::string_view csv) {
  auto rows = provision::ParseNvccMemtrace(csv);
  if (!rows.ok()) return rows.status();
  std::map<std::string, std::vector<const provision::MemtraceRow*>> by_job;
  for (const provision::MemtraceRow& row : *rows) by_job[row.job].push_back(&row);
  std::map<std::string, ArchProfile> profiles;
  for (auto& [job, samples] : by_job) {
    std::stable_sort(samples.begin(), samples.end(), [](auto* a, auto* b) { return a->t_s < b->t_s; });
    const double start = samples.front()->t_s, end = samples.back()->t_s;
    ArchProfile& profile = profiles[job];
    size_t at = 0;
    // Each tick takes the latest sample at or before it (a step function).
    for (double t = start; t <= end; t += kTickSeconds) {
      while (at + 1 < samples.size() && samples[at + 1]->t_s <= t) ++at;
      profile.push_back(samples[at]->rss_mib << 20);
    }
  }
  return profiles;
}

SimCompile ComposeCompile(const std::string& source, const ArchProfile& one_arch, uint32_t archs, uint32_t threads) {
  SimCompile compile;
  compile.source = source;
  compile.archs = archs;
  compile.threads = threads;
  const uint32_t parallel = std::max(1u, std::min(threads, archs));
  const size_t lane = one_arch.size();
  const size_t waves = (archs + parallel - 1) / parallel;
  compile.rss_bytes.assign(lane * waves, 0);
  compile.cores.assign(lane * waves, 0);
  for (uint32_t arch = 0; arch < archs; ++arch) {
    size_t start = (arch / parallel) * lane;
    for (size_t t = 0; t < lane; ++t) {
      compile.rss_bytes[start + t] += one_arch[t];
      compile.cores[start + t] += 1;
    }
  }
  return compile;
}

std::vector<std::string> FlashAttnKernelFiles() {
  std::vector<std::string> files;
  // In setup.py's order, which is ninja's.
  for (const char* kind : {"fwd", "bwd", "fwd_split"}) {
    for (const char* causal : {"", "_causal"}) {
      for (int hdim : {32, 64, 96, 128, 192, 256}) {
        for (const char* dtype : {"fp16", "bf16"}) {
          files.push_back(std::string("flash_") + kind + "_hdim" + std::to_string(hdim) + "_" + dtype + causal +
                          "_sm80.cu");
        }
      }
    }
  }
  return files;
}

std::string TraceJobFor(const std::string& kernel_file) {
  bool bwd = kernel_file.rfind("flash_bwd", 0) == 0;
  size_t at = kernel_file.find("hdim") + 4;
  int hdim = std::stoi(kernel_file.substr(at));
  if (bwd) return "flash_bwd_hdim" + std::string(hdim <= 64 ? "64" : hdim <= 128 ? "128" : "256") + "_bf16_sm80";
  return "flash_fwd_hdim" + std::string(hdim <= 128 ? "128" : "256") + "_bf16_sm80";
}

}  // namespace gpuctl::sim

#include "agents/guard/guard_config.h"
#include "agents/provision/max_jobs_estimate.h"

namespace gpuctl::sim {

SimHost IncidentHost() {
  const uint64_t total = uint64_t{288} << 30;
  return {.cores = 128, .available_bytes = total - (uint64_t{6} << 30),
          .reserve_bytes = guard::DefaultReserveBytes(total)};
}

Result<std::vector<SimCompile>> FlashAttnBuild(const std::map<std::string, ArchProfile>& profiles, uint32_t archs,
                                               uint32_t threads) {
  std::vector<SimCompile> compiles;
  for (const std::string& file : FlashAttnKernelFiles()) {
    auto profile = profiles.find(TraceJobFor(file));
    if (profile == profiles.end()) return NotFound("no trace for " + TraceJobFor(file));
    compiles.push_back(ComposeCompile(file, profile->second, archs, threads));
  }
  return compiles;
}

std::vector<SimRun> IncidentRuns(const SimHost& host, uint32_t archs, uint32_t threads) {
  std::vector<SimRun> runs;
  for (uint32_t jobs : {128u, 64u, 32u}) runs.push_back({"MAX_JOBS=" + std::to_string(jobs), jobs, false});
  const double available_gib = static_cast<double>(host.available_bytes) / static_cast<double>(uint64_t{1} << 30);
  uint32_t formula = std::max(1u, std::min(host.cores / 2, static_cast<uint32_t>(available_gib / (5.0 * threads))));
  runs.push_back({"flash-attn formula", formula, false});
  std::vector<std::string> arch_names;
  for (uint32_t i = 0; i < archs; ++i) arch_names.push_back(std::to_string(80 + 10 * i));
  auto budget = provision::EstimateMaxJobs({.archs = arch_names, .nvcc_threads = threads,
                                            .available_bytes = host.available_bytes,
                                            .reserve_bytes = host.reserve_bytes, .cpus = host.cores});
  runs.push_back({"static model", budget.ok() ? budget->max_jobs : 1, false});
  runs.push_back({"live governor", host.cores, true});
  runs.push_back({.label = "clairvoyant", .max_jobs = host.cores, .governed = false, .history = {},
                  .history_seconds = {}, .history_curves = {}, .clairvoyant = true});
  return runs;
}

}  // namespace gpuctl::sim
