// The readers the log streaming benchmark compares, each on a thread of its
// own: the StreamLogs RPC through the generated stub, and any command whose
// stdout the benchmark reads through a pipe (`gpuctl train logs -f`, `tail -F`).
// Each feeds an Arrivals tally that stamps bytes and lines as they arrive.
#pragma once

#include <sys/types.h>

#include <atomic>
#include <cstdint>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include <grpcpp/grpcpp.h>

#include "gpuctl/v1/agent.grpc.pb.h"

namespace gpuctl::bench {

// Bytes received and, for stamped lines, arrival minus write time. bytes()
// and the completion time may be read from any thread; latencies only after
// the reader finished.
class Arrivals {
 public:
  Arrivals(uint64_t expect_bytes, bool stamped) : expect_(expect_bytes), stamped_(stamped) {}

  // Called by the reader thread with what one read returned and when.
  void Feed(std::string_view data, int64_t now_ns);

  uint64_t bytes() const { return bytes_.load(); }
  uint64_t expected() const { return expect_; }
  bool ready() const;  // the writer's ready line has arrived
  bool complete() const { return bytes() >= expect_; }
  int64_t first_ns() const { return first_ns_.load(); }        // 0 until a byte came
  uint64_t first_bytes() const { return first_bytes_.load(); }  // what that first read brought
  int64_t complete_ns() const { return complete_ns_.load(); }  // 0 until complete
  const std::vector<double>& latency_ms() const { return latency_ms_; }

 private:
  const uint64_t expect_;
  const bool stamped_;
  std::atomic<uint64_t> bytes_{0};
  std::atomic<uint64_t> first_bytes_{0};
  std::atomic<int64_t> first_ns_{0};
  std::atomic<int64_t> complete_ns_{0};
  std::string partial_;
  std::vector<double> latency_ms_;
};

class LogReader {
 public:
  explicit LogReader(Arrivals& arrivals) : arrivals_(arrivals) {}
  virtual ~LogReader() = default;
  LogReader(const LogReader&) = delete;
  LogReader& operator=(const LogReader&) = delete;

  Arrivals& arrivals() { return arrivals_; }
  // Ends the read early (cancel the RPC, SIGTERM the command). Thread-safe.
  virtual void Stop() = 0;
  // Joins the thread; how the reader ended, for the report.
  virtual std::string Finish() = 0;

 protected:
  Arrivals& arrivals_;
};

// StreamLogs{name, follow} from offset 0; cancels itself once complete.
std::unique_ptr<LogReader> StartStreamLogsReader(v1::Agent::Stub& stub, const std::string& job, Arrivals& arrivals);

// Runs argv with stdout on a pipe the thread reads; SIGTERMs it once
// complete. Throws std::runtime_error when it cannot spawn.
std::unique_ptr<LogReader> StartPipeReader(const std::vector<std::string>& argv, Arrivals& arrivals);

}  // namespace gpuctl::bench
