// Log streaming benchmark: a real gpuctld on a temp unix socket runs this
// binary as its job (--write-bulk / --write-stamped, see log_stream_writer.h)
// and three readers take the job's output.log:
//   stub    StreamLogs{follow} through the generated gpuctl::v1::Agent::Stub
//   gpuctl  `gpuctl train logs -f NAME`, stdout read through a pipe
//   tail    `tail -c +1 -F output.log` through a pipe: the baseline
//  1. Latency: one job writes stamped lines at --rate for --seconds, all
//     three readers attached at once; arrival - write per line.
//  2. Throughput, live: per reader a fresh job writes --bytes as fast as it
//     can, that reader alone attached; MB/s = bytes / (last byte in - go).
//     Catch-up: each reader alone reads the first job's finished file, timed
//     from its first byte to its last, the readers in turn for at least 5
//     rounds (median). On the agent's host `gpuctl train logs` reads the file
//     itself (LogChunk.local); the stub takes every byte through the stream.
// Prints figures, ratios to tail and the targets; never fails on
// timing (exit 1 only when the benchmark itself cannot run).
//
//   log_stream_bench [--gpuctld PATH] [--gpuctl PATH] [--bytes 512MiB] [--rounds N]
//                    [--rate LINES_PER_S] [--seconds N]
#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <map>
#include <memory>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#include <grpcpp/grpcpp.h>

#include "common/units.h"
#include "gpuctl/v1/agent.grpc.pb.h"
#include "tests/bench/agent_process.h"
#include "tests/bench/log_bench_support.h"
#include "tests/bench/log_readers.h"
#include "tests/bench/log_stream_writer.h"
#include "tests/bench/proc_sample.h"

namespace gpuctl::bench {
namespace {

constexpr double kTargetP99Ms = 20.0;
constexpr double kTargetMBps = 200.0;
constexpr const char* kKinds[] = {"stub", "gpuctl", "tail"};

struct Options {
  std::string gpuctld = GPUCTL_BENCH_GPUCTLD;
  std::string gpuctl = GPUCTL_BENCH_GPUCTL;
  uint64_t bytes = 512ull * 1024 * 1024;
  int rounds = 1;
  int rate = 1000;
  std::chrono::milliseconds duration{std::chrono::seconds(10)};
};

Options ParseOptions(const std::vector<std::string>& args) {
  Options o;
  for (size_t i = 0; i < args.size(); ++i) {
    const std::string& a = args[i];
    auto value = [&]() -> std::string {
      if (i + 1 >= args.size()) throw std::runtime_error(a + " needs a value");
      return args[++i];
    };
    if (a == "--gpuctld") {
      o.gpuctld = value();
    } else if (a == "--gpuctl") {
      o.gpuctl = value();
    } else if (a == "--bytes") {
      Result<uint64_t> b = ParseByteSize(value());
      if (!b.ok() || *b < 1024 * 1024) throw std::runtime_error("--bytes wants at least 1MiB (e.g. 512MiB)");
      o.bytes = *b;
    } else if (a == "--rounds" || a == "--rate") {
      int n = std::stoi(value());
      if (n < 1) throw std::runtime_error(a + " wants a positive count");
      (a == "--rounds" ? o.rounds : o.rate) = n;
    } else if (a == "--seconds") {
      Result<std::chrono::milliseconds> d = ParseDuration(value());
      if (!d.ok() || d->count() < 1000) throw std::runtime_error("--seconds wants at least 1 (e.g. 10)");
      o.duration = *d;
    } else {
      throw std::runtime_error("unknown argument " + a +
                               "\nusage: log_stream_bench [--gpuctld PATH] [--gpuctl PATH] [--bytes 512MiB] "
                               "[--rounds N] [--rate LINES_PER_S] [--seconds N]");
    }
  }
  return o;
}

// One job run: its readers attach, the go file starts the writer, and the
// readers run until they have `expect` bytes or `limit` passed.
struct RunResult {
  int64_t go_ns = 0, writer_done_ns = 0;
  double agent_cpu_s = 0;
  double settle_s = 0;  // waiting for the agent to go idle after the job
  std::string job_outcome;
  std::string log;
  std::map<std::string, std::unique_ptr<Arrivals>> arrivals;
  std::map<std::string, std::string> ended;
};

class Bench {
 public:
  Bench(const Options& o, AgentProcess& agent, BenchJobs& jobs) : o_(o), agent_(agent), jobs_(jobs) {}

  std::unique_ptr<LogReader> StartReader(const std::string& kind, const std::string& job, const std::string& log,
                                         Arrivals& arrivals) {
    if (kind == "stub") return StartStreamLogsReader(jobs_.stub(), job, arrivals);
    if (kind == "gpuctl") {
      return StartPipeReader({o_.gpuctl, "--agent", agent_.address(), "train", "logs", "-f", job}, arrivals);
    }
    return StartPipeReader({"tail", "-c", "+1", "-F", log}, arrivals);
  }

  RunResult Run(const std::string& job, const std::vector<std::string>& writer, const std::vector<std::string>& kinds,
                uint64_t expect, bool stamped, std::chrono::seconds limit) {
    RunResult r;
    std::string go = jobs_.dir() + "/" + job + ".go", done = jobs_.dir() + "/" + job + ".done";
    std::vector<std::string> command = {SelfExe()};
    command.insert(command.end(), writer.begin(), writer.end());
    command.insert(command.end(), {go, done});
    std::string log = r.log = jobs_.Start(job, command);
    std::vector<std::unique_ptr<LogReader>> readers;
    for (const std::string& kind : kinds) {
      r.arrivals[kind] = std::make_unique<Arrivals>(expect, stamped);
      readers.push_back(StartReader(kind, job, log, *r.arrivals[kind]));
    }
    auto all = [&](auto pred) {
      return std::all_of(readers.begin(), readers.end(), [&](auto& rd) { return pred(rd->arrivals()); });
    };
    if (!WaitFor(std::chrono::seconds(30), [&] { return all([](Arrivals& a) { return a.ready(); }); })) {
      throw std::runtime_error("job " + job + ": the readers did not see its ready line within 30 s");
    }
    uint64_t cpu0 = AgentCpuTicks();
    r.go_ns = MonotonicNs();
    std::ofstream(go).put('\n');
    WaitFor(limit, [&] { return all([](Arrivals& a) { return a.complete(); }); });
    r.agent_cpu_s = TicksToSeconds(AgentCpuTicks() - cpu0);
    for (size_t i = 0; i < readers.size(); ++i) {
      readers[i]->Stop();
      r.ended[kinds[i]] = readers[i]->Finish();
    }
    r.writer_done_ns = ReadDoneFile(done);
    r.settle_s = jobs_.WaitSettled(job, agent_.pid());
    r.job_outcome = jobs_.Outcome(job);
    return r;
  }

  // Each reader alone on a finished log, `rounds` times in turn; MB/s per
  // reader and round. One catch-up takes a fraction of a second, so a single
  // one says more about the machine's moment than about the reader.
  std::map<std::string, std::vector<double>> CatchUp(const std::string& job, const std::string& log, int rounds) {
    std::map<std::string, std::vector<double>> mbps;
    uint64_t size = std::filesystem::file_size(log);
    for (int round = 0; round < rounds; ++round) {
      for (const char* kind : kKinds) {
        Arrivals a(size, false);
        std::unique_ptr<LogReader> reader = StartReader(kind, job, log, a);
        WaitFor(std::chrono::seconds(120), [&] { return a.complete(); });
        reader->Stop();
        reader->Finish();
        // From the first byte, so that starting a process or a call is not counted.
        mbps[kind].push_back(a.complete() ? MBps(size - a.first_bytes(), a.complete_ns() - a.first_ns()) : NAN);
      }
    }
    return mbps;
  }

 private:
  uint64_t AgentCpuTicks() {
    std::optional<ProcSample> s = SampleProcess(agent_.pid());
    return s ? s->cpu_ticks : 0;
  }

  const Options& o_;
  AgentProcess& agent_;
  BenchJobs& jobs_;
};

int RunBench(const Options& o) {
  std::printf("gpuctl log streaming benchmark\n");
  std::printf("host: %u CPUs, load at start: %s", std::thread::hardware_concurrency(), LoadAvg().c_str());
  TmuxServer tmux("gpuctl-log-bench-" + std::to_string(getpid()));
  AgentProcess agent(o.gpuctld, {"--nvml-library", "/nonexistent", "--nvidia-smi", "/nonexistent", "--tmux-socket",
                                 tmux.name()});
  BenchJobs jobs(agent);
  std::printf("agent: %s (pid %d), tmux -L %s; client: %s\n", o.gpuctld.c_str(), agent.pid(), tmux.name().c_str(),
              o.gpuctl.c_str());
  std::printf("logs and state under %s\n", std::filesystem::temp_directory_path().c_str());
  Bench bench(o, agent, jobs);
  const uint64_t bulk_expect = kReadyLine.size() + o.bytes;

  // 1. Latency, first, while the agent and the disk are quiet.
  const auto lines = static_cast<uint64_t>(o.rate) * static_cast<uint64_t>(o.duration.count()) / 1000;
  RunResult lat = bench.Run("stamped", {"--write-stamped", std::to_string(o.rate), std::to_string(o.duration.count())},
                            {kKinds[0], kKinds[1], kKinds[2]}, kReadyLine.size() + lines * kLineBytes, true,
                            std::chrono::duration_cast<std::chrono::seconds>(o.duration) + std::chrono::seconds(30));

  // 2. Throughput. Only the first bulk log is kept (for catch-up): deleting
  // the others spares the disk gigabytes of writeback.
  std::map<std::string, std::vector<double>> live, writer_mbps, kept_up, cpu;
  std::string first_job;
  for (int round = 0; round < o.rounds; ++round) {
    for (const char* kind : kKinds) {
      std::string job = "bulk-" + std::to_string(round) + "-" + kind;
      if (first_job.empty()) first_job = job;
      RunResult r = bench.Run(job, {"--write-bulk", std::to_string(o.bytes)}, {kind}, bulk_expect, false,
                              std::chrono::seconds(300));
      Arrivals& a = *r.arrivals[kind];
      live[kind].push_back(a.complete() ? MBps(o.bytes, a.complete_ns() - r.go_ns) : NAN);
      writer_mbps[kind].push_back(r.writer_done_ns ? MBps(o.bytes, r.writer_done_ns - r.go_ns) : NAN);
      kept_up[kind].push_back(live[kind].back() / writer_mbps[kind].back());
      cpu[kind].push_back(r.agent_cpu_s);
      std::printf("  round %d %-6s %8.1f MB/s (writer %7.1f MB/s, agent CPU %.2f s, %s; agent idle again after %.1f s)\n",
                  round + 1, kind, live[kind].back(), writer_mbps[kind].back(), r.agent_cpu_s, r.ended[kind].c_str(),
                  r.settle_s);
      std::error_code ec;
      if (job != first_job) std::filesystem::remove(r.log, ec);
    }
  }
  const int catch_up_rounds = std::max(5, o.rounds);
  std::map<std::string, std::vector<double>> catch_up =
      bench.CatchUp(first_job, jobs.LogPath(first_job), catch_up_rounds);
  // Each round's ratio to the tail read just before or after it: the
  // machine's slow and fast moments fall on both alike.
  auto catch_up_ratio = [&](const char* kind) {
    std::vector<double> ratios;
    for (size_t i = 0; i < catch_up[kind].size(); ++i) ratios.push_back(catch_up[kind][i] / catch_up["tail"][i]);
    return Median(ratios);
  };

  std::printf("\nthroughput: %s per run (%llu bytes of 100-byte lines, 1 MiB writes); MB = 10^6 bytes;\n",
              FormatBytes(o.bytes).c_str(), static_cast<unsigned long long>(o.bytes));
  std::printf("live = one reader per fresh job, from go to its last byte; median of %d round(s)\n", o.rounds);
  std::printf("catch-up = each reader alone on %s's finished log (page cache warm), first byte to last;\n"
              "  median of %d rounds, the readers in turn; its ratio is the median of each round's ratio\n",
              first_job.c_str(), catch_up_rounds);
  std::printf("live / writer = how much of the writer's own speed the reader kept up with (median of rounds)\n");
  std::printf("  %-36s %10s %12s %14s %12s %14s\n", "reader", "live MB/s", "writer MB/s", "live / writer",
              "agent CPU s", "catch-up MB/s");
  for (const char* kind : kKinds) {
    std::printf("  %-36s %10.1f %12.1f %14.2f %12.2f %14.1f\n", ReaderLabel(kind), Median(live[kind]),
                Median(writer_mbps[kind]), Median(kept_up[kind]), Median(cpu[kind]), Median(catch_up[kind]));
  }
  for (const char* kind : {"stub", "gpuctl"}) {
    std::printf("  ratio %s / tail: live %.2f, live / writer %.2f, catch-up %.2f\n", kind,
                Median(live[kind]) / Median(live["tail"]), Median(kept_up[kind]) / Median(kept_up["tail"]),
                catch_up_ratio(kind));
  }

  std::printf("\nlatency: %d stamped 100-byte lines/s for %.0f s (one write(2) each), all readers at once;\n",
              o.rate, static_cast<double>(o.duration.count()) / 1000.0);
  std::printf("arrival - write (CLOCK_MONOTONIC), ms\n");
  std::printf("  %-36s %8s %8s %8s %8s %8s\n", "reader", "lines", "p50", "p90", "p99", "max");
  std::map<std::string, Percentiles> p;
  for (const char* kind : kKinds) {
    p[kind] = Summarize(lat.arrivals[kind]->latency_ms());
    std::printf("  %-36s %8zu %8.3f %8.3f %8.3f %8.3f\n", ReaderLabel(kind), p[kind].count, p[kind].p50,
                p[kind].p90, p[kind].p99, p[kind].max);
  }
  for (const char* kind : {"stub", "gpuctl"}) {
    std::printf("  ratio %s / tail: p50 %.2f, p99 %.2f\n", kind, p[kind].p50 / p["tail"].p50,
                p[kind].p99 / p["tail"].p99);
  }
  std::printf("  lines expected per reader: %llu; writer finished %.2f s after go; job %s\n",
              static_cast<unsigned long long>(lines),
              lat.writer_done_ns ? static_cast<double>(lat.writer_done_ns - lat.go_ns) / 1e9 : NAN,
              lat.job_outcome.c_str());
  for (const char* kind : kKinds) std::printf("  %s reader: %s\n", kind, lat.ended[kind].c_str());

  std::printf("\ntargets (from the issue)\n");
  for (const char* kind : {"stub", "gpuctl"}) {
    std::string who = std::string(kind) == "stub" ? "StreamLogs" : "gpuctl logs -f";
    PrintTarget(who + " latency p99 <= 20 ms", Fixed(p[kind].p99, "ms"),
                p[kind].count == lines && p[kind].p99 <= kTargetP99Ms);
    PrintTarget(who + " live >= 200 MB/s", Fixed(Median(live[kind]), "MB/s"), Median(live[kind]) >= kTargetMBps);
  }
  // Issue 23: `gpuctl train logs` at tail's speed, live and catching up.
  const double live_ratio = Median(live["gpuctl"]) / Median(live["tail"]);
  PrintTarget("gpuctl logs -f live >= 1.0x tail", Fixed(live_ratio, "x"), live_ratio >= 1.0);
  PrintTarget("gpuctl logs catch-up >= 1.0x tail", Fixed(catch_up_ratio("gpuctl"), "x"),
              catch_up_ratio("gpuctl") >= 1.0);
  std::printf("\nload at end: %s", LoadAvg().c_str());
  std::printf("agent stopped: %s\n", agent.Stop().c_str());
  return 0;
}

}  // namespace
}  // namespace gpuctl::bench

int main(int argc, char** argv) {
  std::setvbuf(stdout, nullptr, _IOLBF, 0);
  std::vector<std::string> args(argv + 1, argv + argc);
  try {
    if (!args.empty() && args[0].starts_with("--write-")) return gpuctl::bench::RunWriter(args);
    return gpuctl::bench::RunBench(gpuctl::bench::ParseOptions(args));
  } catch (const std::exception& e) {
    std::fprintf(stderr, "log_stream_bench: %s\n", e.what());
    return 1;
  }
}
