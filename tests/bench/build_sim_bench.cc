// The trace-replay simulator on the incident host (128 cores, 288 GiB):
// flash-attn 2.8's 72 kernel files, five archs on NVCC_THREADS=4 and one
// arch, under each schedule, against the lower bound measured on the same
// compiles and against the clairvoyant schedule (tests/sim/clairvoyant.h),
// the best that knowing every compile's trace in advance allows. Prints the
// README's table (markdown). Run:
//   build/tests/bench/build_sim_bench [--shapes 5x4,1x4] [TRACE_CSV]
// --shapes: the builds to simulate, each ARCHSxNVCC_THREADS.
#include <cstdio>
#include <cstring>
#include <fstream>
#include <sstream>
#include <string>
#include <utility>
#include <vector>

#include "common/units.h"
#include "tests/sim/build_sim.h"

using namespace gpuctl;

namespace {

std::string BenchRatio(const sim::SimResult& result, double base_s) {
  if (result.oom || result.failed || base_s <= 0) return "-";
  char ratio[32];
  std::snprintf(ratio, sizeof(ratio), "%.2fx", result.makespan_s / base_s);
  return ratio;
}

// "5x4,1x4" -> {{5, 4}, {1, 4}}; empty on a malformed list.
std::vector<std::pair<uint32_t, uint32_t>> ParseShapes(const std::string& list) {
  std::vector<std::pair<uint32_t, uint32_t>> shapes;
  std::stringstream items(list);
  std::string item;
  while (std::getline(items, item, ',')) {
    unsigned archs = 0, threads = 0;
    char end = 0;
    if (std::sscanf(item.c_str(), "%ux%u%c", &archs, &threads, &end) != 2 || archs == 0 || threads == 0 ||
        archs > 64 || threads > 64) {
      return {};
    }
    shapes.emplace_back(archs, threads);
  }
  return shapes;
}

}  // namespace

int main(int argc, char** argv) {
  std::vector<std::pair<uint32_t, uint32_t>> shapes = {{5, 4}, {1, 4}};
  std::string path = std::string(GPUCTL_FIXTURES_DIR) + "/nvcc-memtrace-1arch-t4.csv";
  for (int arg = 1; arg < argc; ++arg) {
    if (std::strcmp(argv[arg], "--shapes") == 0) {
      shapes = arg + 1 < argc ? ParseShapes(argv[++arg]) : decltype(shapes){};
      if (shapes.empty()) {
        std::fprintf(stderr, "--shapes: a list of ARCHSxNVCC_THREADS, such as 5x4,1x4 (1-64 each)\n");
        return 2;
      }
    } else if (argv[arg][0] == '-') {
      std::fprintf(stderr, "usage: build_sim_bench [--shapes 5x4,1x4] [TRACE_CSV]\n");
      return 2;
    } else {
      path = argv[arg];
    }
  }
  std::ifstream in(path);
  std::stringstream text;
  text << in.rdbuf();
  auto profiles = sim::ProfilesFromTrace(text.str());
  if (!profiles.ok()) {
    std::fprintf(stderr, "%s: %s\n", path.c_str(), profiles.status().message().c_str());
    return 1;
  }
  const sim::SimHost host = sim::IncidentHost();
  std::printf("Host: %u cores, %s available to the build, guard reserve %s; traces: %s\n\n", host.cores,
              FormatBytes(host.available_bytes).c_str(), FormatBytes(host.reserve_bytes).c_str(), path.c_str());
  for (auto [archs, threads] : shapes) {
    auto compiles = sim::FlashAttnBuild(*profiles, archs, threads);
    if (!compiles.ok()) {
      std::fprintf(stderr, "%s\n", compiles.status().message().c_str());
      return 1;
    }
    sim::LowerBound bound = sim::ComputeLowerBound(*compiles, host);
    std::vector<sim::SimRun> runs = sim::IncidentRuns(host, archs, threads);
    double clairvoyant_s = 0;
    for (const sim::SimRun& run : runs) {
      if (run.clairvoyant) clairvoyant_s = sim::Simulate(*compiles, host, run).makespan_s;
    }
    std::printf("### %zu kernel files, %u arch%s, NVCC_THREADS=%u\n\n", compiles->size(), archs,
                archs > 1 ? "s" : "", threads);
    std::printf("Lower bound %.0f s = max(CPU %.0f s, memory %.0f s, longest compile %.0f s); clairvoyant %.0f s\n\n",
                bound.bound_s(), bound.cpu_s, bound.memory_s, bound.longest_s, clairvoyant_s);
    std::printf("| schedule | MAX_JOBS | makespan | / clairvoyant | / lower bound | peak memory | OOM | paused |\n");
    std::printf("| --- | --- | --- | --- | --- | --- | --- | --- |\n");
    for (size_t i = 0; i < runs.size(); ++i) {
      const sim::SimRun& run = runs[i];
      sim::SimResult result = sim::Simulate(*compiles, host, run);
      // A rebuild of the same tree: each compile predicted from what it did.
      if (run.governed && run.history.empty()) {
        sim::SimRun rebuild = run;
        rebuild.label = "live governor, rebuild";
        rebuild.history = result.learned;
        rebuild.history_seconds = result.learned_seconds;
        rebuild.history_curves = result.learned_curves;
        runs.insert(runs.begin() + static_cast<std::ptrdiff_t>(i) + 1, rebuild);
      }
      std::string makespan = result.oom ? "-" : std::to_string(static_cast<int>(result.makespan_s)) + " s";
      std::string oom = result.oom ? "yes, at " + std::to_string(static_cast<int>(result.oom_at_s)) + " s"
                                   : (result.failed ? "no (failed: a compile cannot fit)" : "no");
      std::printf("| %s | %u | %s | %s | %s | %s | %s | %.0f compile-s, %llu pauses |\n", result.label.c_str(),
                  result.max_jobs, makespan.c_str(), BenchRatio(result, clairvoyant_s).c_str(),
                  BenchRatio(result, bound.bound_s()).c_str(), FormatBytes(result.peak_bytes).c_str(), oom.c_str(),
                  result.paused_s, static_cast<unsigned long long>(result.pauses));
    }
    std::printf("\n");
  }
  return 0;
}
