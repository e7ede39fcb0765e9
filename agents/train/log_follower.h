// Streams a job's log from an offset, and with `follow` keeps going as the
// job writes (woken by inotify, not a polling sleep) until the job has ended
// and every byte was handed over. One follower per client stream, run on a
// thread of its own; Cancel() ends it promptly from any thread.
#pragma once

#include <atomic>
#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <string_view>

#include "agents/sys/file_watch.h"
#include "agents/train/job_supervisor.h"
#include "common/status.h"

namespace gpuctl::train {

struct LogFollowOptions {
  std::string job;
  uint64_t from_offset = 0;
  uint32_t tail_lines = 0;  // used when from_offset is 0
  bool follow = false;
  size_t chunk_bytes = 256 * 1024;
};

// The offset where the last `lines` lines of the file begin (0 when it has
// fewer). A last line without '\n' counts as a line.
Result<uint64_t> TailStartOffset(const std::string& path, uint32_t lines);

class LogFollower {
 public:
  // Gets each chunk with its offset; returns false to stop (client gone).
  using Sink = std::function<bool(uint64_t offset, std::string_view data)>;

  LogFollower(JobSupervisor& jobs, LogFollowOptions options);

  // Blocks until done. Ok when everything asked for was sent; kNotFound for
  // an unknown job; kUnavailable when cancelled or the sink stopped.
  Status Run(const Sink& sink);
  void Cancel();

 private:
  bool cancelled() const { return cancelled_.load(); }

  JobSupervisor& jobs_;
  LogFollowOptions options_;
  std::atomic<bool> cancelled_{false};
  std::mutex waiter_mutex_;
  std::unique_ptr<sys::FileChangeWaiter> waiter_;
};

}  // namespace gpuctl::train
