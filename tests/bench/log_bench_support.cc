#include "tests/bench/log_bench_support.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <cstdio>
#include <filesystem>
#include <stdexcept>
#include <thread>

#include "tests/bench/log_stream_writer.h"
#include "tests/bench/proc_sample.h"

namespace gpuctl::bench {
namespace {

constexpr auto kCallDeadline = std::chrono::seconds(10);

void SetDeadline(grpc::ClientContext& ctx) { ctx.set_deadline(std::chrono::system_clock::now() + kCallDeadline); }

std::string AgentLog(AgentProcess& agent) {
  return "; its log " + agent.log_path() + ":\n" + ReadSmallFile(agent.log_path()).value_or("");
}

}  // namespace

TmuxServer::~TmuxServer() {
  pid_t pid = fork();
  if (pid == 0) {
    int devnull = open("/dev/null", O_WRONLY);
    if (devnull >= 0) dup2(devnull, STDERR_FILENO);  // "no server running" is fine
    execlp("tmux", "tmux", "-L", name_.c_str(), "kill-server", static_cast<char*>(nullptr));
    _exit(127);
  }
  if (pid > 0) waitpid(pid, nullptr, 0);
  // tmux 3.3 leaves its socket file behind.
  const char* base = std::getenv("TMUX_TMPDIR");
  std::string socket = std::string(base != nullptr && *base != '\0' ? base : "/tmp") + "/tmux-" +
                       std::to_string(getuid()) + "/" + name_;
  unlink(socket.c_str());
}

BenchJobs::BenchJobs(AgentProcess& agent) {
  std::string tmpl = (std::filesystem::temp_directory_path() / "gpuctl-log-bench-XXXXXX").string();
  if (mkdtemp(tmpl.data()) == nullptr) throw std::runtime_error("mkdtemp failed for " + tmpl);
  dir_ = tmpl;
  // Connect only once the socket exists (see health_bench: a channel that
  // first finds no socket takes seconds to come up).
  struct stat st {};
  if (!WaitFor(std::chrono::seconds(15), [&] {
        return !agent.running() || (stat(agent.socket_path().c_str(), &st) == 0 && S_ISSOCK(st.st_mode));
      }) || !agent.running()) {
    throw std::runtime_error("gpuctld made no socket within 15 s" + AgentLog(agent));
  }
  channel_ = grpc::CreateChannel(agent.address(), grpc::InsecureChannelCredentials());
  stub_ = v1::Agent::NewStub(channel_);
  if (!WaitFor(std::chrono::seconds(15), [&] {
        grpc::ClientContext ctx;
        SetDeadline(ctx);
        v1::ListJobsResponse jobs;
        return stub_->ListJobs(&ctx, v1::ListJobsRequest(), &jobs).ok();
      })) {
    throw std::runtime_error("gpuctld did not answer within 15 s" + AgentLog(agent));
  }
}

BenchJobs::~BenchJobs() {
  std::error_code ec;
  std::filesystem::remove_all(dir_, ec);
}

std::string BenchJobs::Start(const std::string& name, const std::vector<std::string>& command) {
  grpc::ClientContext ctx;
  SetDeadline(ctx);
  v1::StartJobRequest request;
  request.mutable_spec()->set_name(name);
  for (const std::string& arg : command) request.mutable_spec()->add_command(arg);
  v1::Job job;
  grpc::Status status = stub_->StartJob(&ctx, request, &job);
  if (!status.ok()) throw std::runtime_error("StartJob " + name + ": " + status.error_message());
  return job.log_path();
}

v1::Job BenchJobs::Get(const std::string& name) {
  grpc::ClientContext ctx;
  SetDeadline(ctx);
  v1::GetJobRequest request;
  request.set_name(name);
  v1::Job job;
  grpc::Status status = stub_->GetJob(&ctx, request, &job);
  if (!status.ok()) throw std::runtime_error("GetJob " + name + ": " + status.error_message());
  return job;
}

std::string BenchJobs::LogPath(const std::string& name) { return Get(name).log_path(); }

std::string BenchJobs::Outcome(const std::string& name) {
  v1::Job job = Get(name);
  std::string state = v1::JobState_Name(job.state());
  return state + ", exit " + (job.has_exit_code() ? std::to_string(job.exit_code()) : "none") + ", " +
         std::to_string(job.log_bytes()) + " log bytes";
}

double BenchJobs::WaitSettled(const std::string& name, pid_t agent_pid) {
  int64_t start = MonotonicNs();
  WaitFor(std::chrono::seconds(30), [&] {
    v1::JobState state = Get(name).state();
    return state != v1::JOB_STATE_STARTING && state != v1::JOB_STATE_RUNNING;
  });
  // Idle: no agent CPU tick in a whole second. The monitor keeps parsing an
  // ended job's log (4 MiB per job per 250 ms tick, under the supervisor's
  // lock) long after the job ended; a looser test let that backlog run into
  // the next measurement as periodic 20-40 ms stalls of every follower.
  for (int i = 0; i < 300; ++i) {
    std::optional<ProcSample> before = SampleProcess(agent_pid);
    std::this_thread::sleep_for(std::chrono::seconds(1));
    std::optional<ProcSample> after = SampleProcess(agent_pid);
    if (!before || !after || after->cpu_ticks == before->cpu_ticks) break;
  }
  return static_cast<double>(MonotonicNs() - start) / 1e9;
}

Percentiles Summarize(std::vector<double> v) {
  Percentiles p;
  p.count = v.size();
  if (v.empty()) {
    p.p50 = p.p90 = p.p99 = p.max = NAN;
    return p;
  }
  std::sort(v.begin(), v.end());
  auto rank = [&](double q) {
    auto idx = static_cast<size_t>(std::ceil(q / 100.0 * static_cast<double>(v.size())));
    return v[std::clamp<size_t>(idx, 1, v.size()) - 1];
  };
  p.p50 = rank(50);
  p.p90 = rank(90);
  p.p99 = rank(99);
  p.max = v.back();
  return p;
}

double Median(std::vector<double> v) {
  if (v.empty()) return NAN;
  std::sort(v.begin(), v.end());
  size_t mid = v.size() / 2;
  return v.size() % 2 == 1 ? v[mid] : (v[mid - 1] + v[mid]) / 2.0;
}

bool WaitFor(std::chrono::milliseconds limit, const std::function<bool()>& done) {
  auto deadline = std::chrono::steady_clock::now() + limit;
  while (!done()) {
    if (std::chrono::steady_clock::now() > deadline) return false;
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
  return true;
}

std::string SelfExe() { return std::filesystem::read_symlink("/proc/self/exe").string(); }

int64_t ReadDoneFile(const std::string& path) {
  std::optional<std::string> text;
  WaitFor(std::chrono::seconds(10), [&] {
    text = ReadSmallFile(path);
    return text && !text->empty() && text->back() == '\n';
  });
  return text && !text->empty() ? std::stoll(*text) : 0;
}

double TicksToSeconds(uint64_t ticks) { return static_cast<double>(ticks) / static_cast<double>(sysconf(_SC_CLK_TCK)); }

double MBps(uint64_t bytes, int64_t ns) { return static_cast<double>(bytes) / 1e6 / (static_cast<double>(ns) / 1e9); }

std::string LoadAvg() { return ReadSmallFile("/proc/loadavg").value_or("unknown\n"); }

const char* ReaderLabel(const std::string& kind) {
  if (kind == "stub") return "StreamLogs follow (gRPC stub)";
  if (kind == "gpuctl") return "gpuctl train logs -f | pipe";
  return "tail -c +1 -F | pipe (baseline)";
}

std::string Fixed(double v, const char* unit) {
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.3f %s", v, unit);
  return buf;
}

void PrintTarget(const std::string& name, const std::string& measured, bool met) {
  std::printf("  %-40s %-14s target met: %s\n", name.c_str(), measured.c_str(), met ? "yes" : "no");
}

}  // namespace gpuctl::bench
