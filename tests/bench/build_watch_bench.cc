// The build governor's own cost: BuildWatch governing 64 compile trees (a
// /proc fixture of 64 nvcc -> sh -> cicc trees under ninja, 193 processes,
// in a temp dir; fake cgroup and signals), ticked as the agent does, 4 times
// a second. Prints the CPU it takes per second of build and the RSS it
// holds, against a baseline measured in the same run: reading the same
// stat files and nothing else. Run: build/tests/bench/build_watch_bench
#include <sys/resource.h>

#include <chrono>
#include <cstdio>
#include <fstream>
#include <string>

#include "agents/build/build_watch.h"
#include "agents/sys/files.h"
#include "tests/fakes/fake_cgroup_driver.h"
#include "tests/fakes/fake_clock.h"
#include "tests/fakes/fake_process_control.h"
#include "tests/fakes/temp_dir.h"

using namespace gpuctl;

namespace {

constexpr int kTrees = 64;
constexpr int kTicks = 400;  // 100 s of build at the agent's 4 ticks a second
const std::string kCgroup = "/gpuctl/fa@r1";

double CpuSeconds() {
  rusage usage{};
  getrusage(RUSAGE_SELF, &usage);
  return static_cast<double>(usage.ru_utime.tv_sec + usage.ru_stime.tv_sec) +
         static_cast<double>(usage.ru_utime.tv_usec + usage.ru_stime.tv_usec) / 1e6;
}

long RssKib() {
  std::ifstream status("/proc/self/status");
  std::string key;
  long value = 0;
  while (status >> key) {
    if (key == "VmRSS:") {
      status >> value;
      return value;
    }
  }
  return 0;
}

void WriteProcess(const testing::TempDir& dir, int64_t pid, int64_t ppid, const std::string& comm, long rss_pages,
                  const std::string& cmdline) {
  std::string stat = std::to_string(pid) + " (" + comm + ") S " + std::to_string(ppid) + " 1 1 0 -1 4194560";
  for (int field = 10; field <= 52; ++field) stat += field == 24 ? " " + std::to_string(rss_pages) : " 0";
  dir.WriteFile("proc/" + std::to_string(pid) + "/stat", stat + "\n");
  dir.WriteFile("proc/" + std::to_string(pid) + "/cmdline", cmdline);
}

}  // namespace

int main() {
  testing::TempDir proc;
  testing::TempDir state;
  testing::FakeCgroupDriver cgroups(sys::CgroupVersion::kV1);
  testing::FakeCgroupDriver::Cgroup cgroup{.max = uint64_t{512} << 30};
  WriteProcess(proc, 10, 1, "ninja", 2048, std::string("ninja\0", 6));
  cgroup.procs.push_back(10);
  for (int i = 0; i < kTrees; ++i) {
    int64_t nvcc = 1000 + 10 * i;
    std::string source = "/src/csrc/flash_attn/src/kernel_" + std::to_string(i) + ".cu";
    std::string argv = std::string("nvcc\0-gencode\0arch=compute_90,code=sm_90\0-c\0", 42) + source + '\0';
    WriteProcess(proc, nvcc, 10, "nvcc", 1000, argv);
    WriteProcess(proc, nvcc + 1, nvcc, "sh", 400, std::string("sh\0", 3));
    WriteProcess(proc, nvcc + 2, nvcc + 1, "cicc", 250000 + 1000 * i, std::string("cicc\0", 5));
    cgroup.procs.insert(cgroup.procs.end(), {nvcc, nvcc + 1, nvcc + 2});
  }
  cgroups.Put("/gpuctl", {});
  cgroups.Put(kCgroup, cgroup);
  testing::FakeProcessControl processes;
  // The real agent's kill() costs a syscall; the fake records each one. As
  // the fixture does not change, a paused tree still reads as running and is
  // stopped again every tick: the worst case.
  testing::FakeClock clock;
  sys::HostFs fs(proc.path());

  // Baseline: the stat reads alone.
  double start = CpuSeconds();
  size_t bytes = 0;
  for (int tick = 0; tick < kTicks; ++tick) {
    for (int64_t pid : cgroup.procs) bytes += fs.ReadFile("proc/" + std::to_string(pid) + "/stat").value_or("").size();
  }
  double baseline = CpuSeconds() - start;

  long rss_before = RssKib();
  build::BuildWatchHooks hooks;
  // A budget that holds about half the trees' predicted peaks: the rest paused.
  hooks.builds = [] { return std::vector<build::BuildJob>{{"fa", "r1", kCgroup, "/src", uint64_t{220} << 30}}; };
  build::BuildWatchOptions options;
  options.history_path = state.path() + "/build-peaks.json";
  build::BuildWatch watch(options, hooks, cgroups, processes, fs, clock);
  start = CpuSeconds();
  for (int tick = 0; tick < kTicks; ++tick) {
    watch.Tick();
    clock.Advance(std::chrono::milliseconds(250));
  }
  double governed = CpuSeconds() - start;
  long rss_after = RssKib();
  auto stats = watch.Stats("r1");
  watch.Stop();

  const double build_seconds = kTicks / 4.0;
  std::printf("build_watch_bench: %d trees (%zu processes), %d ticks = %.0f s of build\n", kTrees, cgroup.procs.size(),
              kTicks, build_seconds);
  std::printf("  governing:        %.2f ms CPU per tick, %.4f CPU-s per build-second (%.2f%% of one core)\n",
              1e3 * governed / kTicks, governed / build_seconds, 100 * governed / build_seconds);
  std::printf("  baseline (reads): %.2f ms CPU per tick (%zu bytes read)\n", 1e3 * baseline / kTicks, bytes);
  std::printf("  ratio governing / reads alone: %.2f\n", baseline > 0 ? governed / baseline : 0.0);
  std::printf("  RSS while governing: +%ld KiB (%ld -> %ld KiB); trees running %u, paused %u\n", rss_after - rss_before,
              rss_before, rss_after, stats ? stats->running : 0, stats ? stats->paused : 0);
  return 0;
}
