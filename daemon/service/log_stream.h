// StreamLogs: a stream that pulls the next chunk from a LogFollower when the
// last write is done, and at the end of what is written waits on the
// FileWatchHub. No thread of its own and at most one chunk in memory, so a
// slow client costs one chunk and an idle follower a few hundred bytes.
// Streams are counted against a cap (LogStreamSlots): past it the client
// gets RESOURCE_EXHAUSTED with the reason instead of the agent's memory.
// How it ends (client gone, job ended, shutdown) is StreamWriter's business:
// every way gives the slot back.
#pragma once

#include <atomic>
#include <cstdint>
#include <optional>

#include "agents/sys/file_watch_hub.h"
#include "agents/train/log_follower.h"
#include "daemon/service/stream_writer.h"
#include "gpuctl/v1/jobs.pb.h"

namespace gpuctl::daemon {

// How many log streams are open, and how many may be.
class LogStreamSlots {
 public:
  explicit LogStreamSlots(size_t max_open) : max_open_(max_open) {}
  bool TryTake();
  // Gives a slot back; when the last one goes, freed memory is handed back
  // to the system (a burst of streams must not leave the agent large).
  void Give();
  size_t open() const { return open_.load(); }
  size_t max_open() const { return max_open_; }

 private:
  const size_t max_open_;
  std::atomic<size_t> open_{0};
};

class LogStreamReactor final : public StreamWriter<v1::LogChunk> {
 public:
  // Takes one of `slots` (given back in OnDone), or finishes at once with
  // RESOURCE_EXHAUSTED when none is free. With `streams`, shutdown ends it.
  LogStreamReactor(train::JobSupervisor& jobs, sys::FileWatchHub& hub, LogStreamSlots& slots,
                   train::LogFollowOptions options, OpenStreams* streams = nullptr);

 private:
  Next Produce(v1::LogChunk& out, grpc::Status& end) override;
  void Release() override;

  sys::FileWatchHub& hub_;
  LogStreamSlots& slots_;
  bool has_slot_ = false;
  // Guarded by the stream's lock (Produce, Update).
  std::optional<train::LogFollower> follower_;
  std::optional<grpc::Status> refused_;  // why the stream ends before its first chunk
  uint64_t ticket_ = 0;                  // the hub wait now pending, if any
};

}  // namespace gpuctl::daemon
