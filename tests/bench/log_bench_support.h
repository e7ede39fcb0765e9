// What the log streaming benchmark needs around its readers: the agent's
// jobs over gRPC, the private tmux server, small figures and printing.
#pragma once

#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include <grpcpp/grpcpp.h>

#include "gpuctl/v1/agent.grpc.pb.h"
#include "tests/bench/agent_process.h"

namespace gpuctl::bench {

// Kills the private tmux server (`tmux -L NAME kill-server`) on destruction,
// so jobs never outlive the benchmark. Declare it before the AgentProcess.
class TmuxServer {
 public:
  explicit TmuxServer(std::string name) : name_(std::move(name)) {}
  ~TmuxServer();
  TmuxServer(const TmuxServer&) = delete;
  TmuxServer& operator=(const TmuxServer&) = delete;
  const std::string& name() const { return name_; }

 private:
  std::string name_;
};

// The agent's job RPCs, plus a temp dir of our own for the go/done files.
// The constructor waits until the agent answers; throws std::runtime_error
// (with the agent's log) when it does not within 15 s.
class BenchJobs {
 public:
  explicit BenchJobs(AgentProcess& agent);
  ~BenchJobs();
  BenchJobs(const BenchJobs&) = delete;
  BenchJobs& operator=(const BenchJobs&) = delete;

  v1::Agent::Stub& stub() { return *stub_; }
  const std::string& dir() const { return dir_; }
  // StartJob; returns the job's log path. Throws on error.
  std::string Start(const std::string& name, const std::vector<std::string>& command);
  std::string LogPath(const std::string& name);
  // "succeeded, exit 0, 12345 log bytes" for the report.
  std::string Outcome(const std::string& name);
  // Waits until the job has ended and the agent is idle again (its monitor
  // has parsed the log), so one run's leftovers do not load the next; gives
  // up after about 5 minutes. Returns the seconds it waited.
  double WaitSettled(const std::string& name, pid_t agent_pid);

 private:
  v1::Job Get(const std::string& name);

  std::string dir_;
  std::shared_ptr<grpc::Channel> channel_;
  std::unique_ptr<v1::Agent::Stub> stub_;
};

struct Percentiles {
  size_t count = 0;
  double p50 = 0, p90 = 0, p99 = 0, max = 0;  // NaN when count is 0
};
Percentiles Summarize(std::vector<double> values);  // nearest rank
double Median(std::vector<double> values);

// Polls `done` every millisecond until it holds or `limit` passed.
bool WaitFor(std::chrono::milliseconds limit, const std::function<bool()>& done);
std::string SelfExe();
// The job's end time from its done file (waits up to 10 s); 0 when absent.
int64_t ReadDoneFile(const std::string& path);
double TicksToSeconds(uint64_t ticks);
double MBps(uint64_t bytes, int64_t ns);  // 10^6 bytes per second
std::string LoadAvg();                    // "/proc/loadavg" line, with its '\n'
const char* ReaderLabel(const std::string& kind);
std::string Fixed(double v, const char* unit);
void PrintTarget(const std::string& name, const std::string& measured, bool met);

}  // namespace gpuctl::bench
