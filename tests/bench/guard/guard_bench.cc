// Memory guard benchmark: a real gpuctld guarding a 2 GiB cgroup v1 memory
// domain, and runaway jobs (tests/grow_memory) growing into it at 1 and
// 4 GiB/s, one job per episode, one agent for all episodes.
//
// Per episode the bench itself polls the domain every 1 ms (usage_in_bytes
// minus reclaimable file cache against the limit, the guard's own formula) to see
// the moment the line is crossed, and a pidfd of the job's grow_memory to see
// the moment it is dead; "freed" is when the domain is back above the line.
// The guard's own figure (the guard_kill event's reaction_ms) is read too.
// A thread calls GetHealth every 10 ms through the generated stub all along,
// and samples the agent's VmRSS.
//
// Baseline, same run: earlyoom. It watches host MemAvailable, not a cgroup, so
// the bench lowers host MemAvailable with an mlocked ballast child (its
// oom_score_adj -1000, so earlyoom never picks it) until about 2 GiB plus the
// line is left, runs earlyoom in the foreground with -M LINE,LINE (SIGKILL at
// the same absolute line) and --prefer grow_memory, and starts grow_memory at
// the same rates outside gpuctl. Crossing (host MemAvailable < line), death
// (pidfd) and freed are measured by the same 1 ms poll. What is compared is
// therefore the detection + kill + exit latency at the same rate and line,
// not the same domain.
//
// Then gpuctl's host domain, the default on real GPU hosts (PSI trigger plus
// MemAvailable): the same ballast, gpuctld --guard-domain host with the same
// line as its reserve, jobs in cgroups of their own under a parent limited to
// 4 GiB (more than the host has left, so the host line is what is crossed).
// This one compares with earlyoom on the same domain.
// Never fails on timing; exit 1 only when it cannot run.
//
//   guard_bench [--episodes N] [--rates 1,4] [--no-earlyoom] [--earlyoom PATH] [--no-host]
//
// Needs root, a cgroup v1 memory hierarchy at /sys/fs/cgroup/memory and no swap.
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <functional>
#include <atomic>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <mutex>
#include <nlohmann/json.hpp>
#include <optional>
#include <sstream>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#include <grpcpp/grpcpp.h>

#include "gpuctl/v1/agent.grpc.pb.h"
#include "tests/bench/agent_process.h"
#include "tests/bench/proc_sample.h"
#include "common/units.h"

namespace gpuctl::bench {
namespace {

using Clock = std::chrono::steady_clock;
using nlohmann::json;

constexpr uint64_t kDomainBytes = 2 * kGiB;
// gpuctl's default reserve for a 2 GiB domain: min(max(1 GiB, 3%), total/8).
constexpr uint64_t kLineBytes = kDomainBytes / 8;
const std::string kMemoryRoot = "/sys/fs/cgroup/memory";

constexpr double kTargetReactionP99Ms = 50;
constexpr double kTargetEarlyoomRatio = 0.3;
constexpr double kTargetHealthP99Ms = 50;
constexpr double kTargetRssMiB = 32;

struct Options {
  std::string gpuctld = GPUCTL_BENCH_GPUCTLD;
  std::string gpuctl = GPUCTL_BENCH_GPUCTL;
  std::string grow = GPUCTL_BENCH_GROW_MEMORY;
  std::string earlyoom = "/usr/bin/earlyoom";
  int episodes = 20;
  std::vector<double> rates = {1, 4};
  bool with_earlyoom = true;
  bool with_host = true;
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
    if (a == "--episodes") {
      o.episodes = std::stoi(value());
      if (o.episodes < 1) throw std::runtime_error("--episodes wants a positive count");
    } else if (a == "--rates") {
      o.rates.clear();
      std::istringstream in(value());
      for (std::string r; std::getline(in, r, ',');) o.rates.push_back(std::stod(r));
    } else if (a == "--no-earlyoom") {
      o.with_earlyoom = false;
    } else if (a == "--no-host") {
      o.with_host = false;
    } else if (a == "--earlyoom") {
      o.earlyoom = value();
    } else {
      throw std::runtime_error("unknown argument " + a +
                               "\nusage: guard_bench [--episodes N] [--rates 1,4] [--no-earlyoom] [--earlyoom PATH] [--no-host]");
    }
  }
  return o;
}

std::string ReadText(const std::string& path) {
  std::ifstream in(path);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

uint64_t KeyValue(const std::string& text, const std::string& key) {
  std::istringstream in(text);
  std::string k;
  uint64_t v = 0;
  while (in >> k >> v) {
    if (k == key) return v;
    std::getline(in, k);
  }
  return 0;
}

std::string OwnMemoryCgroup() {
  std::istringstream lines(ReadText("/proc/self/cgroup"));
  for (std::string line; std::getline(lines, line);) {
    size_t first = line.find(':'), second = line.find(':', first + 1);
    if (second == std::string::npos) continue;
    std::string controllers = line.substr(first + 1, second - first - 1);
    if (controllers == "memory" || controllers.find("memory,") == 0 || controllers.find(",memory") != std::string::npos) {
      std::string path = line.substr(second + 1);
      return path == "/" ? "" : path;
    }
  }
  return "";
}

void KillAndRemove(const std::string& dir) {
  std::error_code ec;
  if (!std::filesystem::exists(dir, ec)) return;
  for (const auto& entry : std::filesystem::directory_iterator(dir, ec)) {
    if (entry.is_directory()) KillAndRemove(entry.path().string());
  }
  for (int attempt = 0; attempt < 100 && rmdir(dir.c_str()) != 0; ++attempt) {
    std::istringstream procs(ReadText(dir + "/cgroup.procs"));
    for (pid_t pid = 0; procs >> pid;) kill(pid, SIGKILL);
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
}

// Runs argv, returns (exit code, stdout).
std::pair<int, std::string> Run(const std::vector<std::string>& argv) {
  int fds[2];
  if (pipe2(fds, O_CLOEXEC) != 0) throw std::runtime_error("pipe failed");
  std::vector<std::string> copy = argv;
  std::vector<char*> cargv;
  for (std::string& a : copy) cargv.push_back(a.data());
  cargv.push_back(nullptr);
  pid_t pid = fork();
  if (pid == 0) {
    dup2(fds[1], STDOUT_FILENO);
    int devnull = open("/dev/null", O_WRONLY);
    dup2(devnull, STDERR_FILENO);
    execv(cargv[0], cargv.data());
    _exit(127);
  }
  close(fds[1]);
  std::string out;
  char buf[65536];
  for (ssize_t n; (n = read(fds[0], buf, sizeof buf)) > 0;) out.append(buf, static_cast<size_t>(n));
  close(fds[0]);
  int status = 0;
  waitpid(pid, &status, 0);
  return {WIFEXITED(status) ? WEXITSTATUS(status) : 128, out};
}

int PidfdOpen(pid_t pid) { return static_cast<int>(syscall(SYS_pidfd_open, pid, 0)); }

bool PidfdDead(int fd) {
  pollfd p{fd, POLLIN, 0};
  return poll(&p, 1, 0) > 0;
}

// A small file read again and again from one open fd.
class Reread {
 public:
  explicit Reread(const std::string& path) : fd_(open(path.c_str(), O_RDONLY | O_CLOEXEC)) {
    if (fd_ < 0) throw std::runtime_error("cannot open " + path);
  }
  ~Reread() { close(fd_); }
  Reread(const Reread&) = delete;
  Reread& operator=(const Reread&) = delete;
  const std::string& Read() {
    text_.resize(16384);
    ssize_t n = pread(fd_, text_.data(), text_.size(), 0);
    text_.resize(n > 0 ? static_cast<size_t>(n) : 0);
    return text_;
  }

 private:
  int fd_;
  std::string text_;
};

uint64_t FieldAfter(const std::string& text, const char* key) {
  size_t at = text.find(key);
  if (at == std::string::npos) return 0;
  return std::strtoull(text.c_str() + at + std::strlen(key), nullptr, 10);
}

// Available memory the way each tool sees its domain.
class AvailableReader {
 public:
  virtual ~AvailableReader() = default;
  virtual uint64_t Available() = 0;
};

class CgroupAvailable : public AvailableReader {
 public:
  explicit CgroupAvailable(const std::string& dir)
      : usage_(dir + "/memory.usage_in_bytes"), stat_(dir + "/memory.stat") {}
  uint64_t Available() override {
    uint64_t usage = std::strtoull(usage_.Read().c_str(), nullptr, 10);
    std::string stat = stat_.Read();
    uint64_t file = FieldAfter(stat, "\ntotal_inactive_file ") + FieldAfter(stat, "\ntotal_active_file ");
    uint64_t busy = FieldAfter(stat, "\ntotal_dirty ") + FieldAfter(stat, "\ntotal_writeback ");
    uint64_t reclaimable = file > busy ? file - busy : 0;
    uint64_t working = usage - std::min(usage, reclaimable);
    return working < kDomainBytes ? kDomainBytes - working : 0;
  }

 private:
  Reread usage_, stat_;
};

class HostAvailable : public AvailableReader {
 public:
  HostAvailable() : meminfo_("/proc/meminfo") {}
  uint64_t Available() override { return FieldAfter(meminfo_.Read(), "MemAvailable:") * 1024; }

 private:
  Reread meminfo_;
};

struct Episode {
  bool crossed = false, dead = false, freed = false;
  double cross_to_dead_ms = NAN, cross_to_freed_ms = NAN;
  double event_reaction_ms = NAN;
  double event_cross_skew_ms = NAN;  // event's crossed_unix_ms - bench's crossing
  uint64_t min_available = UINT64_MAX;
  std::string state;
  uint64_t job_oom_kills = 0;
};

// Polls every 1 ms (absolute deadlines) until the victim is dead and the
// domain is back above the line, or `limit` passes.
void Watch(AvailableReader& reader, int pidfd, Episode& e, std::chrono::milliseconds limit,
           std::chrono::system_clock::time_point* crossed_wall, const std::function<void()>& on_dead = {}) {
  Clock::time_point start = Clock::now(), crossed_at{};
  timespec next;
  clock_gettime(CLOCK_MONOTONIC, &next);
  while (Clock::now() - start < limit) {
    uint64_t available = reader.Available();
    Clock::time_point now = Clock::now();
    e.min_available = std::min(e.min_available, available);
    if (!e.crossed && available < kLineBytes) {
      e.crossed = true;
      crossed_at = now;
      if (crossed_wall) *crossed_wall = std::chrono::system_clock::now();
    }
    if (!e.dead && PidfdDead(pidfd)) {
      e.dead = true;
      if (on_dead) on_dead();
      if (e.crossed) e.cross_to_dead_ms = std::chrono::duration<double, std::milli>(now - crossed_at).count();
    }
    if (e.dead && available >= kLineBytes) {
      e.freed = true;
      if (e.crossed) e.cross_to_freed_ms = std::chrono::duration<double, std::milli>(now - crossed_at).count();
      return;
    }
    next.tv_nsec += 1'000'000;
    if (next.tv_nsec >= 1'000'000'000) {
      next.tv_nsec -= 1'000'000'000;
      ++next.tv_sec;
    }
    clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &next, nullptr);
  }
}

// The grow_memory whose memory cgroup lies under `under`.
pid_t FindGrowMemory(const std::string& under) {
  for (const auto& entry : std::filesystem::directory_iterator("/proc")) {
    std::string name = entry.path().filename().string();
    if (name.empty() || !std::isdigit(static_cast<unsigned char>(name[0]))) continue;
    std::string comm = ReadText(entry.path().string() + "/comm");
    if (comm != "grow_memory\n") continue;
    std::string cg = ReadText(entry.path().string() + "/cgroup");
    if (cg.find(":memory:" + under) != std::string::npos || cg.find(",memory:" + under) != std::string::npos) {
      return static_cast<pid_t>(std::stol(name));
    }
  }
  return -1;
}

std::string MemoryCgroupOf(pid_t pid) {
  std::istringstream lines(ReadText("/proc/" + std::to_string(pid) + "/cgroup"));
  for (std::string line; std::getline(lines, line);) {
    size_t first = line.find(':'), second = line.find(':', first + 1);
    if (second == std::string::npos) continue;
    std::string c = line.substr(first + 1, second - first - 1);
    if (c == "memory" || c.find("memory,") == 0 || c.find(",memory") != std::string::npos) return line.substr(second + 1);
  }
  return "";
}

uint64_t VmstatOomKills() { return KeyValue(ReadText("/proc/vmstat"), "oom_kill"); }

struct Stats {
  double p50 = NAN, p99 = NAN, max = NAN;
  size_t n = 0;
};

Stats Summarize(std::vector<double> v) {
  v.erase(std::remove_if(v.begin(), v.end(), [](double x) { return std::isnan(x); }), v.end());
  Stats s;
  s.n = v.size();
  if (v.empty()) return s;
  std::sort(v.begin(), v.end());
  auto rank = [&](double p) {
    auto idx = static_cast<size_t>(std::ceil(p / 100.0 * static_cast<double>(v.size())));
    return v[std::clamp<size_t>(idx, 1, v.size()) - 1];
  };
  s.p50 = rank(50);
  s.p99 = rank(99);
  s.max = v.back();
  return s;
}

// GetHealth every 10 ms and the agent's VmRSS, all through the run.
class HealthProbe {
 public:
  HealthProbe(const std::string& address, pid_t agent) : agent_(agent) {
    stub_ = v1::Agent::NewStub(grpc::CreateChannel(address, grpc::InsecureChannelCredentials()));
    thread_ = std::thread([this] { Loop(); });
  }
  ~HealthProbe() { Stop(); }
  void Stop() {
    done_ = true;
    if (thread_.joinable()) thread_.join();
  }
  void SetInEpisode(bool on) { in_episode_ = on; }

  std::vector<double> episode_ms;
  size_t calls = 0, failed = 0;
  uint64_t rss_max_kb = 0, rss_episode_max_kb = 0;

 private:
  void Loop() {
    auto next = Clock::now();
    while (!done_) {
      grpc::ClientContext ctx;
      ctx.set_deadline(std::chrono::system_clock::now() + std::chrono::seconds(5));
      v1::HealthSnapshot snapshot;
      bool during = in_episode_;
      Clock::time_point start = Clock::now();
      bool ok = stub_->GetHealth(&ctx, v1::GetHealthRequest(), &snapshot).ok();
      double ms = std::chrono::duration<double, std::milli>(Clock::now() - start).count();
      during = during || in_episode_;
      std::optional<ProcSample> sample = SampleProcess(agent_);
      {
        std::lock_guard lock(mutex_);
        ++calls;
        if (!ok) ++failed;
        if (during) episode_ms.push_back(ms);
        if (sample) {
          rss_max_kb = std::max(rss_max_kb, sample->rss_kb);
          if (during) rss_episode_max_kb = std::max(rss_episode_max_kb, sample->rss_kb);
        }
      }
      next += std::chrono::milliseconds(10);
      if (next < Clock::now()) next = Clock::now();
      std::this_thread::sleep_until(next);
    }
  }

  pid_t agent_;
  std::unique_ptr<v1::Agent::Stub> stub_;
  std::atomic<bool> done_{false}, in_episode_{false};
  std::mutex mutex_;
  std::thread thread_;
};

struct RateResult {
  double rate = 0;
  std::vector<Episode> episodes;
  uint64_t domain_oom_kills = 0, vmstat_oom_kills = 0;
};

struct GpuctlRun {
  std::vector<RateResult> rates;
  Stats health;
  size_t health_calls = 0, health_failed = 0;
  uint64_t rss_max_kb = 0, rss_episode_max_kb = 0;
};

// One gpuctld guarding `guard_args`' domain, whose available memory `reader`
// reads; jobs' grow_memory is looked for under cgroup `jobs_under`, and
// `oom_dir`'s memory.oom_control counts the domain's kernel OOM kills.
GpuctlRun RunGpuctl(const Options& o, const std::vector<std::string>& guard_args, AvailableReader& reader,
                    const std::string& jobs_under, const std::string& oom_dir) {
  GpuctlRun run;
  std::string tmux = "gpuctl-gbench-" + std::to_string(getpid());
  std::vector<std::string> agent_args = {"--tmux-socket", tmux, "--nvml-library", "/nonexistent", "--nvidia-smi",
                                         "/nonexistent"};
  agent_args.insert(agent_args.end(), guard_args.begin(), guard_args.end());
  AgentProcess agent(o.gpuctld, agent_args);
  auto gpuctl = [&](std::vector<std::string> args) {
    std::vector<std::string> argv = {o.gpuctl, "--agent", agent.address()};
    argv.insert(argv.end(), args.begin(), args.end());
    return Run(argv);
  };
  auto cleanup_tmux = [&] { Run({"/usr/bin/tmux", "-L", tmux, "kill-server"}); };
  try {
    auto ready_by = Clock::now() + std::chrono::seconds(10);
    while (gpuctl({"health"}).first != 0) {
      if (Clock::now() > ready_by || !agent.running()) {
        throw std::runtime_error("gpuctld did not come up; see " + agent.log_path() + ":\n" + ReadText(agent.log_path()));
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(50));
    }
    HealthProbe probe(agent.address(), agent.pid());
    for (double rate : o.rates) {
      RateResult rr;
      rr.rate = rate;
      uint64_t domain_oom_before = KeyValue(ReadText(oom_dir + "/memory.oom_control"), "oom_kill");
      uint64_t vmstat_before = VmstatOomKills();
      for (int i = 0; i < o.episodes; ++i) {
        Episode e;
        char name[64];
        std::snprintf(name, sizeof name, "hog-%g-%d", rate, i);
        char rate_text[32];
        std::snprintf(rate_text, sizeof rate_text, "%g", rate);
        probe.SetInEpisode(true);
        auto started = gpuctl({"train", "start", "--name", name, "--", o.grow, rate_text, "8"});
        if (started.first != 0) throw std::runtime_error(std::string("gpuctl train start failed for ") + name);
        pid_t pid = -1;
        for (auto by = Clock::now() + std::chrono::seconds(5); pid < 0 && Clock::now() < by;) {
          pid = FindGrowMemory(jobs_under);
          if (pid < 0) std::this_thread::sleep_for(std::chrono::milliseconds(2));
        }
        if (pid < 0) throw std::runtime_error(std::string("no grow_memory seen for ") + name);
        int pidfd = PidfdOpen(pid);
        if (pidfd < 0) throw std::runtime_error("pidfd_open failed");
        std::string job_dir = kMemoryRoot + MemoryCgroupOf(pid);
        Reread job_oom(job_dir + "/memory.oom_control");
        std::chrono::system_clock::time_point crossed_wall{};
        Watch(reader, pidfd, e, std::chrono::seconds(30), &crossed_wall,
              [&] { e.job_oom_kills = FieldAfter(job_oom.Read(), "oom_kill "); });
        close(pidfd);
        // The job's end as gpuctl reports it, and its guard_kill event.
        json job;
        for (auto by = Clock::now() + std::chrono::seconds(10); Clock::now() < by;) {
          auto r = gpuctl({"-o", "json", "train", "status", name});
          if (r.first == 0) job = json::parse(r.second, nullptr, false);
          if (job.is_object() && job.value("state", "") != "running" && job.value("state", "") != "starting") break;
          std::this_thread::sleep_for(std::chrono::milliseconds(20));
        }
        probe.SetInEpisode(false);
        e.state = job.is_object() ? job.value("state", "?") : "?";
        auto events = gpuctl({"-o", "json", "events"});
        std::istringstream lines(events.second);
        for (std::string line; std::getline(lines, line);) {
          json ev = json::parse(line, nullptr, false);
          if (!ev.is_object() || ev.value("kind", "") != "guard_kill" || ev.value("job", "") != name) continue;
          e.event_reaction_ms = ev["fields"].value("reaction_ms", NAN);
          if (e.crossed) {
            auto bench_cross_ms =
                std::chrono::duration_cast<std::chrono::milliseconds>(crossed_wall.time_since_epoch()).count();
            e.event_cross_skew_ms = static_cast<double>(ev["fields"].value("crossed_unix_ms", int64_t{0}) - bench_cross_ms);
          }
        }
        rr.episodes.push_back(e);
        std::this_thread::sleep_for(std::chrono::milliseconds(300));  // let the domain settle
      }
      rr.domain_oom_kills = KeyValue(ReadText(oom_dir + "/memory.oom_control"), "oom_kill") - domain_oom_before;
      rr.vmstat_oom_kills = VmstatOomKills() - vmstat_before;
      run.rates.push_back(std::move(rr));
    }
    probe.Stop();
    run.health = Summarize(probe.episode_ms);
    run.health_calls = probe.calls;
    run.health_failed = probe.failed;
    run.rss_max_kb = probe.rss_max_kb;
    run.rss_episode_max_kb = probe.rss_episode_max_kb;
    if (!agent.running()) throw std::runtime_error("gpuctld died during the run");
  } catch (...) {
    cleanup_tmux();
    throw;
  }
  agent.Stop();
  cleanup_tmux();
  return run;
}

// A child holding `bytes` mlocked, never chosen by earlyoom or the kernel.
pid_t StartBallast(uint64_t bytes) {
  int ready[2];
  if (pipe(ready) != 0) throw std::runtime_error("pipe failed");
  pid_t parent = getpid();
  pid_t pid = fork();
  if (pid == 0) {
    prctl(PR_SET_PDEATHSIG, SIGKILL);
    if (getppid() != parent) _exit(1);
    std::ofstream("/proc/self/oom_score_adj") << -1000;
    void* p = mmap(nullptr, bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_POPULATE | MAP_LOCKED, -1, 0);
    char ok = p == MAP_FAILED ? 'n' : 'y';
    if (write(ready[1], &ok, 1) != 1) _exit(1);
    while (true) pause();
  }
  close(ready[1]);
  char ok = 'n';
  if (read(ready[0], &ok, 1) != 1 || ok != 'y') {
    kill(pid, SIGKILL);
    waitpid(pid, nullptr, 0);
    throw std::runtime_error("the ballast could not lock its memory");
  }
  close(ready[0]);
  return pid;
}

// Ballast until host MemAvailable is about `left`: locking one reclaims
// page cache, which MemAvailable had counted, so it is topped up until the
// figure holds (a host that keeps more available than asked would let a
// job reach its own limit before the host line).
std::vector<pid_t> StartBallastLeaving(uint64_t left, uint64_t& total_bytes) {
  HostAvailable host;
  std::vector<pid_t> ballasts;
  total_bytes = 0;
  for (int round = 0; round < 4; ++round) {
    uint64_t available = host.Available();
    if (available <= left + 128 * kMiB) break;
    uint64_t bytes = available - left;
    ballasts.push_back(StartBallast(bytes));
    total_bytes += bytes;
    std::this_thread::sleep_for(std::chrono::milliseconds(300));
  }
  return ballasts;
}

void StopBallast(const std::vector<pid_t>& ballasts) {
  for (pid_t pid : ballasts) {
    kill(pid, SIGKILL);
    waitpid(pid, nullptr, 0);
  }
}

pid_t Spawn(const std::vector<std::string>& argv, const std::string& log) {
  std::vector<std::string> copy = argv;
  std::vector<char*> cargv;
  for (std::string& a : copy) cargv.push_back(a.data());
  cargv.push_back(nullptr);
  pid_t parent = getpid();
  pid_t pid = fork();
  if (pid == 0) {
    prctl(PR_SET_PDEATHSIG, SIGKILL);
    if (getppid() != parent) _exit(127);
    int fd = open(log.c_str(), O_WRONLY | O_CREAT | O_APPEND, 0644);
    dup2(fd, STDOUT_FILENO);
    dup2(fd, STDERR_FILENO);
    execv(cargv[0], cargv.data());
    _exit(127);
  }
  return pid;
}

// gpuctl guarding the host (PSI + MemAvailable) under the same mlocked
// ballast as the earlyoom baseline.
GpuctlRun RunGpuctlHost(const Options& o, uint64_t& ballast_bytes) {
  HostAvailable host;
  uint64_t available = host.Available();
  uint64_t want_left = 2 * kGiB + kLineBytes;
  if (available < want_left + kGiB) throw std::runtime_error("too little host memory for the host domain run");
  std::string parent = OwnMemoryCgroup() + "/gpuctl-guard-bench-host-" + std::to_string(getpid());
  std::string parent_dir = kMemoryRoot + parent;
  if (mkdir(parent_dir.c_str(), 0755) != 0) throw std::runtime_error("cannot create " + parent_dir);
  // A hard limit for the memory hogs (they refuse to run without one), above
  // what the host has left: the host line is crossed first.
  std::ofstream(parent_dir + "/memory.limit_in_bytes") << 4 * kGiB;
  std::vector<pid_t> ballast = StartBallastLeaving(want_left, ballast_bytes);
  auto stop = [&] {
    StopBallast(ballast);
    KillAndRemove(parent_dir);
  };
  GpuctlRun run;
  try {
    run = RunGpuctl(o,
                    {"--guard-domain", "host", "--guard-reserve", std::to_string(kLineBytes / kMiB) + "M",
                     "--cgroup-parent", parent},
                    host, parent, parent_dir);
  } catch (...) {
    stop();
    throw;
  }
  stop();
  return run;
}

struct EarlyoomRun {
  std::vector<RateResult> rates;
  uint64_t ballast_bytes = 0;
  std::string note;
};

EarlyoomRun RunEarlyoom(const Options& o) {
  EarlyoomRun run;
  HostAvailable host;
  uint64_t available = host.Available();
  uint64_t want_left = 2 * kGiB + kLineBytes;
  if (available < want_left + kGiB) throw std::runtime_error("too little host memory for the earlyoom baseline");
  // grow_memory runs only under a hard memory limit: a cgroup of its own,
  // limited above what the host has left, so the host line comes first.
  std::string jobs_dir = kMemoryRoot + OwnMemoryCgroup() + "/gpuctl-guard-bench-eo-" + std::to_string(getpid());
  if (mkdir(jobs_dir.c_str(), 0755) != 0) throw std::runtime_error("cannot create " + jobs_dir);
  std::ofstream(jobs_dir + "/memory.limit_in_bytes") << 4 * kGiB;
  std::vector<pid_t> ballast = StartBallastLeaving(want_left, run.ballast_bytes);
  std::string log = "/tmp/guard_bench-earlyoom-" + std::to_string(getpid()) + ".log";
  std::string line_kib = std::to_string(kLineBytes / 1024);
  // -M alone sets the line (SIGTERM and SIGKILL both at it); with no swap, swap counts as "low".
  pid_t earlyoom = Spawn({o.earlyoom, "-M", line_kib + "," + line_kib, "-s", "100", "-r", "0",
                          "--prefer", "^grow_memory$", "--avoid", "^(gpuctld|guard_bench|sshd)$"},
                         log);
  std::this_thread::sleep_for(std::chrono::milliseconds(500));
  auto stop = [&] {
    kill(earlyoom, SIGTERM);
    waitpid(earlyoom, nullptr, 0);
    StopBallast(ballast);
    KillAndRemove(jobs_dir);
  };
  try {
    if (waitpid(earlyoom, nullptr, WNOHANG) == earlyoom) {
      throw std::runtime_error("earlyoom exited at start:\n" + ReadText(log));
    }
    for (double rate : o.rates) {
      RateResult rr;
      rr.rate = rate;
      uint64_t vmstat_before = VmstatOomKills();
      char rate_text[32];
      std::snprintf(rate_text, sizeof rate_text, "%g", rate);
      for (int i = 0; i < o.episodes; ++i) {
        Episode e;
        // Into the cgroup, then exec: the pid (and its pidfd) stays the same.
        pid_t pid = Spawn({"/bin/sh", "-c", "echo $$ >\"$0\" && exec \"$@\"", jobs_dir + "/cgroup.procs", o.grow,
                           rate_text, "8"},
                          "/dev/null");
        int pidfd = PidfdOpen(pid);
        Watch(host, pidfd, e, std::chrono::seconds(30), nullptr);
        close(pidfd);
        if (!e.dead) kill(pid, SIGKILL);
        int status = 0;
        waitpid(pid, &status, 0);
        e.state = WIFSIGNALED(status) ? std::string("signal ") + strsignal(WTERMSIG(status)) : "exited";
        rr.episodes.push_back(e);
        std::this_thread::sleep_for(std::chrono::milliseconds(300));
      }
      rr.vmstat_oom_kills = VmstatOomKills() - vmstat_before;
      run.rates.push_back(std::move(rr));
    }
  } catch (...) {
    stop();
    throw;
  }
  stop();
  run.note = log;
  return run;
}

std::string Ms(double v) {
  if (std::isnan(v)) return "n/a";
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.1f ms", v);
  return buf;
}

template <typename F>
std::vector<double> Collect(const RateResult& r, F f) {
  std::vector<double> out;
  for (const Episode& e : r.episodes) out.push_back(f(e));
  return out;
}

void PrintEpisodes(const char* tool, const RateResult& r) {
  int crossed = 0, dead = 0, missed = 0;
  std::string states;
  for (const Episode& e : r.episodes) {
    crossed += e.crossed;
    dead += e.dead;
    missed += e.dead && !e.crossed;
  }
  std::printf("  %s %g GiB/s: %zu episodes, crossing seen %d, victim dead %d, dead before the bench saw a crossing %d\n",
              tool, r.rate, r.episodes.size(), crossed, dead, missed);
  std::printf("    per episode cross->dead ms:");
  for (const Episode& e : r.episodes) std::printf(" %.0f", e.cross_to_dead_ms);
  std::printf("\n    victim end states:");
  std::string last;
  int run = 0;
  auto flush = [&] {
    if (run) std::printf(" %s x%d", last.c_str(), run);
  };
  for (const Episode& e : r.episodes) {
    if (e.state != last) {
      flush();
      last = e.state;
      run = 0;
    }
    ++run;
  }
  flush();
  std::printf("\n");
}

void Target(const char* what, const std::string& value, bool met) {
  std::printf("  %-52s %-12s target met: %s\n", what, value.c_str(), met ? "yes" : "no");
}

// The floor no guard can beat: how long a process holding what the victims
// hold at the line (domain - line) takes to die after SIGKILL, with no guard
// involved (the kernel unmapping its pages). Measured in a cgroup of its own
// inside the domain, whose hard limit bounds it.
Stats ExitFloor(const std::string& domain_dir, int rounds) {
  const std::string dir = domain_dir + "/exit-floor";
  if (mkdir(dir.c_str(), 0755) != 0) throw std::runtime_error("cannot create " + dir);
  std::ofstream(dir + "/memory.limit_in_bytes") << kDomainBytes;
  const size_t bytes = kDomainBytes - kLineBytes;
  std::vector<double> ms;
  for (int i = 0; i < rounds; ++i) {
    int ready[2];
    if (pipe(ready) != 0) throw std::runtime_error("pipe failed");
    pid_t pid = fork();
    if (pid == 0) {
      std::string self = std::to_string(getpid());
      int procs = open((dir + "/cgroup.procs").c_str(), O_WRONLY);
      if (procs < 0 || write(procs, self.data(), self.size()) < 0) _exit(1);
      auto* memory = static_cast<char*>(mmap(nullptr, bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0));
      if (memory == MAP_FAILED) _exit(1);
      for (size_t at = 0; at < bytes; at += 4096) memory[at] = 1;
      if (write(ready[1], "x", 1) != 1) _exit(1);
      for (;;) pause();
    }
    close(ready[1]);
    char byte = 0;
    bool touched = read(ready[0], &byte, 1) == 1;
    close(ready[0]);
    int fd = PidfdOpen(pid);
    auto killed = Clock::now();
    kill(pid, SIGKILL);
    pollfd p{fd, POLLIN, 0};
    poll(&p, 1, 10'000);
    if (touched) ms.push_back(std::chrono::duration<double, std::milli>(Clock::now() - killed).count());
    close(fd);
    waitpid(pid, nullptr, 0);
  }
  KillAndRemove(dir);
  return Summarize(ms);
}

int Main(int argc, char** argv) {
  Options o = ParseOptions(argc, argv);
  if (geteuid() != 0) throw std::runtime_error("needs root (memory cgroups, mlock)");
  if (!std::filesystem::exists(kMemoryRoot + "/memory.limit_in_bytes")) {
    throw std::runtime_error("no cgroup v1 memory hierarchy at " + kMemoryRoot);
  }
  if (KeyValue(ReadText("/proc/meminfo"), "SwapTotal:") > 0) throw std::runtime_error("swap is on");
  if (o.with_earlyoom && access(o.earlyoom.c_str(), X_OK) != 0) {
    throw std::runtime_error("no earlyoom at " + o.earlyoom + " (apt-get install -y earlyoom, or --no-earlyoom)");
  }

  std::string domain = OwnMemoryCgroup() + "/gpuctl-guard-bench-" + std::to_string(getpid());
  std::string domain_dir = kMemoryRoot + domain;
  if (mkdir(domain_dir.c_str(), 0755) != 0) throw std::runtime_error("cannot create " + domain_dir);
  std::ofstream(domain_dir + "/memory.limit_in_bytes") << kDomainBytes;

  std::printf("guard_bench: %d episodes at each of", o.episodes);
  for (double r : o.rates) std::printf(" %g", r);
  std::printf(" GiB/s; domain %s limited to 2 GiB; line: available < %llu MiB\n", domain.c_str(),
              static_cast<unsigned long long>(kLineBytes / kMiB));
  std::printf("method: the bench polls every 1 ms (gpuctl: domain limit - (usage_in_bytes - reclaimable file);\n"
              "  earlyoom: host MemAvailable) and a pidfd of grow_memory; cross->dead = the bench's crossing to\n"
              "  the pidfd reporting the exit; cross->freed = to the domain back above the line.\n");
  std::fflush(stdout);

  GpuctlRun g;
  Stats floor;
  try {
    floor = ExitFloor(domain_dir, 10);
    CgroupAvailable reader(domain_dir);
    g = RunGpuctl(o, {"--guard-domain", "cgroup:" + domain}, reader, domain, domain_dir);
  } catch (...) {
    KillAndRemove(domain_dir);
    throw;
  }
  KillAndRemove(domain_dir);

  std::optional<GpuctlRun> host;
  uint64_t host_ballast = 0;
  std::string host_error;
  if (o.with_host) {
    try {
      host = RunGpuctlHost(o, host_ballast);
    } catch (const std::exception& e) {
      host_error = e.what();
    }
  }

  std::optional<EarlyoomRun> eo;
  std::string eo_error;
  if (o.with_earlyoom) {
    try {
      eo = RunEarlyoom(o);
    } catch (const std::exception& e) {
      eo_error = e.what();
    }
  }

  std::printf("\nepisodes\n");
  for (const RateResult& r : g.rates) PrintEpisodes("gpuctl  ", r);
  if (host) {
    for (const RateResult& r : host->rates) PrintEpisodes("gpuctl-host", r);
    std::printf("  gpuctl-host setup: ballast %.1f GiB mlocked, gpuctld --guard-domain host --guard-reserve %llu MiB\n",
                static_cast<double>(host_ballast) / static_cast<double>(kGiB),
                static_cast<unsigned long long>(kLineBytes / kMiB));
  } else if (!host_error.empty()) {
    std::printf("  gpuctl host domain could not run: %s\n", host_error.c_str());
  }
  if (eo) {
    for (const RateResult& r : eo->rates) PrintEpisodes("earlyoom", r);
    std::printf("  earlyoom setup: ballast %.1f GiB mlocked (oom_score_adj -1000), earlyoom -M %llu,%llu "
                "-s 100 --prefer ^grow_memory$ (log %s)\n",
                static_cast<double>(eo->ballast_bytes) / static_cast<double>(kGiB),
                static_cast<unsigned long long>(kLineBytes / 1024), static_cast<unsigned long long>(kLineBytes / 1024),
                eo->note.c_str());
  } else if (!eo_error.empty()) {
    std::printf("  earlyoom baseline could not run: %s\n", eo_error.c_str());
  }

  std::printf("\n%-10s %-6s %-22s %-22s %-22s %-16s\n", "tool", "GiB/s", "event reaction p50/p99",
              "cross->dead p50/p99", "cross->freed p50/p99", "OOM kills d/j/host");
  auto row = [](const char* tool, const RateResult& r, bool gpuctl) {
    Stats ev = Summarize(Collect(r, [](const Episode& e) { return e.event_reaction_ms; }));
    Stats dead = Summarize(Collect(r, [](const Episode& e) { return e.cross_to_dead_ms; }));
    Stats freed = Summarize(Collect(r, [](const Episode& e) { return e.cross_to_freed_ms; }));
    uint64_t job_ooms = 0;
    for (const Episode& e : r.episodes) job_ooms += e.job_oom_kills;
    char ooms[64];
    if (gpuctl) {
      std::snprintf(ooms, sizeof ooms, "%llu/%llu/%llu", static_cast<unsigned long long>(r.domain_oom_kills),
                    static_cast<unsigned long long>(job_ooms), static_cast<unsigned long long>(r.vmstat_oom_kills));
    } else {
      std::snprintf(ooms, sizeof ooms, "-/-/%llu", static_cast<unsigned long long>(r.vmstat_oom_kills));
    }
    std::printf("%-10s %-6g %-22s %-22s %-22s %-16s\n", tool, r.rate,
                gpuctl ? (Ms(ev.p50) + " / " + Ms(ev.p99)).c_str() : "-",
                (Ms(dead.p50) + " / " + Ms(dead.p99)).c_str(), (Ms(freed.p50) + " / " + Ms(freed.p99)).c_str(), ooms);
    return dead;
  };
  std::vector<Stats> gdead, hdead, edead;
  for (const RateResult& r : g.rates) gdead.push_back(row("gpuctl", r, true));
  if (host) {
    for (const RateResult& r : host->rates) hdead.push_back(row("gpuctl-host", r, true));
  }
  if (eo) {
    for (const RateResult& r : eo->rates) edead.push_back(row("earlyoom", r, false));
    for (size_t i = 0; i < g.rates.size() && i < edead.size(); ++i) {
      std::printf("ratio gpuctl/earlyoom at %g GiB/s, cross->dead: p50 %.2f, p99 %.2f\n", g.rates[i].rate,
                  gdead[i].p50 / edead[i].p50, gdead[i].p99 / edead[i].p99);
    }
    for (size_t i = 0; i < hdead.size() && i < edead.size(); ++i) {
      std::printf("ratio gpuctl-host/earlyoom at %g GiB/s (same domain), cross->dead: p50 %.2f, p99 %.2f\n",
                  host->rates[i].rate, hdead[i].p50 / edead[i].p50, hdead[i].p99 / edead[i].p99);
    }
  }
  std::printf("exit floor (SIGKILL -> dead of a process holding %llu MiB, no guard, %zu rounds): p50 %s, p99 %s\n",
              static_cast<unsigned long long>((kDomainBytes - kLineBytes) / kMiB), floor.n, Ms(floor.p50).c_str(),
              Ms(floor.p99).c_str());
  std::printf("(OOM kills d/j/host: kernel OOM kills in memory.oom_control of the domain / of the job cgroups /\n"
              " in /proc/vmstat oom_kill over the phase)\n");
  std::printf("GetHealth during episodes (every 10 ms): %zu calls, p50 %s, p99 %s, max %s; %zu calls in all, %zu failed\n",
              g.health.n, Ms(g.health.p50).c_str(), Ms(g.health.p99).c_str(), Ms(g.health.max).c_str(),
              g.health_calls, g.health_failed);
  std::printf("agent VmRSS max: %.1f MiB (during episodes %.1f MiB)\n", static_cast<double>(g.rss_max_kb) / 1024.0,
              static_cast<double>(g.rss_episode_max_kb) / 1024.0);

  std::printf("\ntargets\n");
  uint64_t ooms = 0;
  auto targets = [&](const char* tool, const std::vector<RateResult>& rates, const std::vector<Stats>& dead) {
    for (size_t i = 0; i < rates.size(); ++i) {
      const RateResult& r = rates[i];
      ooms += r.domain_oom_kills + r.vmstat_oom_kills;
      for (const Episode& e : r.episodes) ooms += e.job_oom_kills;
      char what[96];
      std::snprintf(what, sizeof what, "%s cross->dead p99 <= 50 ms at %g GiB/s", tool, r.rate);
      Target(what, Ms(dead[i].p99), dead[i].p99 <= kTargetReactionP99Ms);
      if (i < edead.size()) {
        std::snprintf(what, sizeof what, "%s p99 <= 0.3x earlyoom at %g GiB/s", tool, r.rate);
        char ratio[32];
        std::snprintf(ratio, sizeof ratio, "%.2fx", dead[i].p99 / edead[i].p99);
        Target(what, ratio, dead[i].p99 / edead[i].p99 <= kTargetEarlyoomRatio);
      }
      std::printf("  %-52s %s (what the guard adds to the exit)\n", (std::string(tool) + " p99 - exit floor p50").c_str(),
                  Ms(dead[i].p99 - floor.p50).c_str());
    }
  };
  targets("gpuctl", g.rates, gdead);
  if (host) targets("gpuctl-host", host->rates, hdead);
  Target("zero kernel OOM kills", std::to_string(ooms), ooms == 0);
  Target("GetHealth p99 <= 50 ms under pressure", Ms(g.health.p99), g.health.p99 <= kTargetHealthP99Ms);
  char rss[32];
  std::snprintf(rss, sizeof rss, "%.1f MiB", static_cast<double>(g.rss_max_kb) / 1024.0);
  Target("agent RSS <= 32 MiB", rss, static_cast<double>(g.rss_max_kb) / 1024.0 <= kTargetRssMiB);
  return 0;
}

}  // namespace
}  // namespace gpuctl::bench

int main(int argc, char** argv) {
  try {
    return gpuctl::bench::Main(argc, argv);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "guard_bench: %s\n", e.what());
    return 1;
  }
}
