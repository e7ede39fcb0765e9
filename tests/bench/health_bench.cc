// Health benchmark: a real gpuctld on a temp unix socket.
//  1. GetHealth latency (sequential calls) against a baseline measured in the
//     same run on the same channel: grpc.health.v1.Health/Check, which does no
//     work of ours.
//  2. Idle cost: one client streams WatchHealth at 1 Hz while the agent's RSS
//     and CPU are sampled from procfs.
// Prints figures and compares them with the targets; never fails on
// timing (exit 1 only when the benchmark itself cannot run).
//
//   health_bench [--gpuctld PATH] [--seconds N] [--calls N] [--warmup N] [-- GPUCTLD_FLAGS...]
//
// Without `--` the agent gets --nvml-library /nonexistent --nvidia-smi
// /nonexistent (host sampling only); flags after `--` are passed instead, so a
// bare `--` runs it with its own defaults (the real NVML on a GPU host). The agent inherits the environment, so
// `MALLOC_ARENA_MAX=2 health_bench` measures the agent under that setting.
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <functional>
#include <optional>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#include <grpcpp/generic/generic_stub.h>
#include <grpcpp/grpcpp.h>

#include "common/units.h"
#include "gpuctl/v1/agent.grpc.pb.h"
#include "tests/bench/agent_process.h"
#include "tests/bench/proc_sample.h"

namespace gpuctl::bench {
namespace {

using Clock = std::chrono::steady_clock;

constexpr double kTargetP99Ms = 5.0;
constexpr double kTargetRssMiB = 24.0;
constexpr double kTargetCpuPct = 0.5;
constexpr auto kCallDeadline = std::chrono::seconds(5);

struct Options {
  std::string gpuctld = GPUCTL_BENCH_GPUCTLD;
  std::chrono::milliseconds window{std::chrono::seconds(60)};
  int calls = 1000;
  int warmup = 50;
  std::vector<std::string> agent_flags = {"--nvml-library", "/nonexistent", "--nvidia-smi", "/nonexistent"};
};

Options ParseOptions(int argc, char** argv) {
  Options o;
  std::vector<std::string> args(argv + 1, argv + argc);
  for (size_t i = 0; i < args.size(); ++i) {
    const std::string& a = args[i];
    auto value = [&]() -> std::string {
      if (i + 1 >= args.size()) throw std::runtime_error(a + " needs a value");
      return args[++i];
    };
    if (a == "--gpuctld") {
      o.gpuctld = value();
    } else if (a == "--seconds") {
      Result<std::chrono::milliseconds> d = ParseDuration(value());
      if (!d.ok() || d->count() < 1000) throw std::runtime_error("--seconds wants at least 1 (e.g. 10, 1m)");
      o.window = *d;
    } else if (a == "--calls" || a == "--warmup") {
      int n = std::stoi(value());
      if (n < 1) throw std::runtime_error(a + " wants a positive count");
      (a == "--calls" ? o.calls : o.warmup) = n;
    } else if (a == "--") {
      o.agent_flags.assign(args.begin() + static_cast<std::ptrdiff_t>(i) + 1, args.end());
      break;
    } else {
      throw std::runtime_error("unknown argument " + a +
                               "\nusage: health_bench [--gpuctld PATH] [--seconds N] [--calls N] "
                               "[--warmup N] [-- GPUCTLD_FLAGS...]");
    }
  }
  return o;
}

double MiB(uint64_t kb) { return static_cast<double>(kb) / 1024.0; }

std::string Join(const std::vector<std::string>& v) {
  std::string out;
  for (const std::string& s : v) out += (out.empty() ? "" : " ") + s;
  return out;
}

struct Latency {
  double p50, p90, p99, max;  // milliseconds
  size_t over_1ms;            // how many calls took longer than 1 ms
};

// Nearest-rank percentiles.
Latency Summarize(std::vector<double> ms) {
  std::sort(ms.begin(), ms.end());
  auto rank = [&](double p) {
    auto idx = static_cast<size_t>(std::ceil(p / 100.0 * static_cast<double>(ms.size())));
    return ms[std::clamp<size_t>(idx, 1, ms.size()) - 1];
  };
  auto over = static_cast<size_t>(ms.end() - std::upper_bound(ms.begin(), ms.end(), 1.0));
  return {rank(50), rank(90), rank(99), ms.back(), over};
}

struct Probe {
  const char* name;
  std::function<bool()> call;
  std::vector<double> ms;
};

// Warms each probe up, then times `calls` rounds; each round calls every probe
// once, so the measured call and its baseline see the same machine load.
void Measure(const Options& o, std::vector<Probe>& probes) {
  for (Probe& p : probes) {
    for (int i = 0; i < o.warmup; ++i) {
      if (!p.call()) throw std::runtime_error(std::string(p.name) + " failed during warm-up");
    }
    p.ms.reserve(static_cast<size_t>(o.calls));
  }
  for (int i = 0; i < o.calls; ++i) {
    for (Probe& p : probes) {
      Clock::time_point start = Clock::now();
      if (!p.call()) throw std::runtime_error(std::string(p.name) + " failed");
      p.ms.push_back(std::chrono::duration<double, std::milli>(Clock::now() - start).count());
    }
  }
}

bool GetHealth(v1::Agent::Stub& stub) {
  grpc::ClientContext ctx;
  ctx.set_deadline(std::chrono::system_clock::now() + kCallDeadline);
  v1::HealthSnapshot snapshot;
  grpc::Status status = stub.GetHealth(&ctx, v1::GetHealthRequest(), &snapshot);
  if (!status.ok()) std::fprintf(stderr, "GetHealth: %s\n", status.error_message().c_str());
  return status.ok();
}

// grpc.health.v1.Health/Check with an empty HealthCheckRequest (""), through
// the generic stub: Debian ships no generated health stubs. SERVING is "\x08\x01".
bool HealthCheck(grpc::GenericStub& stub, grpc::CompletionQueue& cq) {
  grpc::ClientContext ctx;
  ctx.set_deadline(std::chrono::system_clock::now() + kCallDeadline);
  grpc::Slice empty{std::string()};
  grpc::ByteBuffer request(&empty, 1);
  grpc::ByteBuffer response;
  grpc::Status status;
  std::unique_ptr<grpc::GenericClientAsyncResponseReader> call =
      stub.PrepareUnaryCall(&ctx, "/grpc.health.v1.Health/Check", request, &cq);
  call->StartCall();
  int tag = 0;
  call->Finish(&response, &status, &tag);
  void* got = nullptr;
  bool ok = false;
  if (!cq.Next(&got, &ok) || got != &tag || !ok || !status.ok()) {
    std::fprintf(stderr, "Health/Check: %s\n", status.error_message().c_str());
    return false;
  }
  std::vector<grpc::Slice> slices;
  if (!response.Dump(&slices).ok()) return false;
  std::string bytes;
  for (const grpc::Slice& s : slices) bytes.append(reinterpret_cast<const char*>(s.begin()), s.size());
  return bytes == std::string("\x08\x01", 2);
}

void PrintLatency(const char* name, const Latency& l) {
  std::printf("  %-34s %8.3f %8.3f %8.3f %8.3f %9zu\n", name, l.p50, l.p90, l.p99, l.max, l.over_1ms);
}

void PrintTarget(const char* name, const std::string& measured, bool met) {
  std::printf("  %-28s %-14s target met: %s\n", name, measured.c_str(), met ? "yes" : "no");
}

std::string Fixed(double v, const char* unit) {
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.3f %s", v, unit);
  return buf;
}

bool WaitForSocket(AgentProcess& agent) {
  Clock::time_point deadline = Clock::now() + std::chrono::seconds(15);
  struct stat st {};
  while (stat(agent.socket_path().c_str(), &st) != 0 || !S_ISSOCK(st.st_mode)) {
    if (Clock::now() > deadline || !agent.running()) return false;
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
  return true;
}

bool WaitForAgent(AgentProcess& agent, v1::Agent::Stub& stub) {
  Clock::time_point deadline = Clock::now() + std::chrono::seconds(15);
  while (Clock::now() < deadline && agent.running()) {
    grpc::ClientContext ctx;
    ctx.set_deadline(std::chrono::system_clock::now() + std::chrono::milliseconds(500));
    v1::HealthSnapshot snapshot;
    if (stub.GetHealth(&ctx, v1::GetHealthRequest(), &snapshot).ok()) return true;
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  return false;
}

int Run(const Options& o) {
  AgentProcess agent(o.gpuctld, o.agent_flags);
  // Connect only once the socket exists: with gRPC 1.51 a channel whose first
  // attempts find no socket took about 5 s to come up, even with short
  // reconnect backoffs, which would only delay the run.
  if (!WaitForSocket(agent)) {
    std::fprintf(stderr, "gpuctld made no socket within 15 s; its log: %s\n%s\n", agent.log_path().c_str(),
                 ReadSmallFile(agent.log_path()).value_or("").c_str());
    return 1;
  }
  std::shared_ptr<grpc::Channel> channel = grpc::CreateChannel(agent.address(), grpc::InsecureChannelCredentials());
  std::unique_ptr<v1::Agent::Stub> stub = v1::Agent::NewStub(channel);
  if (!WaitForAgent(agent, *stub)) {
    std::fprintf(stderr, "gpuctld did not answer within 15 s; its log: %s\n%s\n", agent.log_path().c_str(),
                 ReadSmallFile(agent.log_path()).value_or("").c_str());
    return 1;
  }
  std::optional<ProcSample> at_start = SampleProcess(agent.pid());
  std::printf("gpuctl health benchmark\n");
  std::printf("agent: %s (pid %d) %s\n", o.gpuctld.c_str(), agent.pid(), Join(o.agent_flags).c_str());
  if (const char* arenas = std::getenv("MALLOC_ARENA_MAX")) std::printf("env: MALLOC_ARENA_MAX=%s\n", arenas);
  if (at_start) {
    std::printf("agent after start: RSS %.1f MiB, %llu threads\n", MiB(at_start->rss_kb),
                static_cast<unsigned long long>(at_start->threads));
  }

  // 1. Latency: GetHealth and its baseline alternate on the same channel.
  grpc::GenericStub generic(channel);
  grpc::CompletionQueue cq;
  std::vector<Probe> probes = {{"GetHealth", [&] { return GetHealth(*stub); }, {}},
                               {"Health/Check", [&] { return HealthCheck(generic, cq); }, {}}};
  Measure(o, probes);
  Latency get = Summarize(probes[0].ms);
  Latency check = Summarize(probes[1].ms);
  cq.Shutdown();
  void* tag = nullptr;
  bool ok = false;
  while (cq.Next(&tag, &ok)) {
  }
  std::printf("\nlatency over the unix socket: %d sequential calls each, alternating, after %d warm-up, ms\n", o.calls, o.warmup);
  std::printf("  %-34s %8s %8s %8s %8s %9s\n", "", "p50", "p90", "p99", "max", "n > 1 ms");
  PrintLatency("gpuctl.v1.Agent/GetHealth", get);
  PrintLatency("grpc.health.v1.Health/Check (base)", check);
  std::printf("  ratio p99 GetHealth / p99 Check: %.2f\n", get.p99 / check.p99);
  std::optional<ProcSample> after_latency = SampleProcess(agent.pid());
  if (after_latency) std::printf("agent after the latency runs: RSS %.1f MiB\n", MiB(after_latency->rss_kb));

  // 2. Idle cost with one WatchHealth stream at 1 Hz.
  grpc::ClientContext watch_ctx;
  v1::WatchHealthRequest watch_request;
  watch_request.set_interval_ms(1000);
  std::atomic<int> received{0};
  std::unique_ptr<grpc::ClientReader<v1::HealthSnapshot>> reader = stub->WatchHealth(&watch_ctx, watch_request);
  std::thread watcher([&] {
    v1::HealthSnapshot snapshot;
    while (reader->Read(&snapshot)) ++received;
  });
  Clock::time_point first_wait = Clock::now() + std::chrono::seconds(5);
  while (received == 0 && Clock::now() < first_wait) std::this_thread::sleep_for(std::chrono::milliseconds(10));

  const long ticks_per_s = sysconf(_SC_CLK_TCK);
  std::optional<ProcSample> first = SampleProcess(agent.pid());
  int received_at_start = received;
  Clock::time_point start = Clock::now();
  ProcSample last = first.value_or(ProcSample{}), max_rss = last;
  uint64_t max_threads = last.threads;
  while (first && Clock::now() - start < o.window) {
    std::this_thread::sleep_for(std::chrono::milliseconds(200));
    std::optional<ProcSample> s = SampleProcess(agent.pid());
    if (!s) break;
    last = *s;
    if (s->rss_kb > max_rss.rss_kb) max_rss = *s;
    max_threads = std::max(max_threads, s->threads);
  }
  double wall_s = std::chrono::duration<double>(Clock::now() - start).count();
  int messages = received - received_at_start;
  watch_ctx.TryCancel();
  watcher.join();
  grpc::Status watch_status = reader->Finish();
  if (!first || !agent.running()) {
    std::fprintf(stderr, "gpuctld exited during the idle window; its log: %s\n", agent.log_path().c_str());
    return 1;
  }
  uint64_t ticks = last.cpu_ticks - first->cpu_ticks;
  double cpu_pct = 100.0 * static_cast<double>(ticks) / static_cast<double>(ticks_per_s) / wall_s;
  std::printf("\nidle cost: one WatchHealth stream at 1 s, %.1f s window, samples every 200 ms\n", wall_s);
  std::printf("  stream messages received in the window: %d (stream ended: %s)\n", messages,
              watch_status.error_message().c_str());
  std::printf("  RSS max: %.1f MiB (anon %.1f MiB, file %.1f MiB); at end %.1f MiB; VmHWM %.1f MiB\n",
              MiB(max_rss.rss_kb), MiB(max_rss.rss_anon_kb), MiB(max_rss.rss_file_kb), MiB(last.rss_kb),
              MiB(last.hwm_kb));
  std::printf("  threads: %llu max\n", static_cast<unsigned long long>(max_threads));
  std::printf("  CPU: %.3f %% of one core (%llu ticks at %ld Hz over %.1f s)\n", cpu_pct,
              static_cast<unsigned long long>(ticks), ticks_per_s, wall_s);

  std::printf("\ntargets (from the issue)\n");
  PrintTarget("GetHealth p99 <= 5 ms", Fixed(get.p99, "ms"), get.p99 <= kTargetP99Ms);
  PrintTarget("RSS max <= 24 MiB", Fixed(MiB(max_rss.rss_kb), "MiB"), MiB(max_rss.rss_kb) <= kTargetRssMiB);
  PrintTarget("CPU <= 0.5 % of one core", Fixed(cpu_pct, "%"), cpu_pct <= kTargetCpuPct);
  std::printf("\nagent stopped: %s\n", agent.Stop().c_str());
  return 0;
}

}  // namespace
}  // namespace gpuctl::bench

int main(int argc, char** argv) {
  std::setvbuf(stdout, nullptr, _IOLBF, 0);  // progress shows through `| tee`
  try {
    return gpuctl::bench::Run(gpuctl::bench::ParseOptions(argc, argv));
  } catch (const std::exception& e) {
    std::fprintf(stderr, "health_bench: %s\n", e.what());
    return 1;
  }
}
