// StreamLogs: a reactor that pulls the next chunk from a LogFollower when
// the last write is done, and at the end of what is written waits on the
// FileWatchHub. No thread of its own and at most one chunk in memory, so a
// slow client costs one chunk and an idle follower a few hundred bytes.
// Streams are counted against a cap (LogStreamSlots): past it the client
// gets RESOURCE_EXHAUSTED with the reason instead of the agent's memory.
#pragma once

#include <atomic>
#include <cstdint>
#include <mutex>
#include <optional>

#include <grpcpp/grpcpp.h>

#include "agents/sys/file_watch_hub.h"
#include "agents/train/log_follower.h"
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

class LogStreamReactor final : public grpc::ServerWriteReactor<v1::LogChunk> {
 public:
  // Takes one of `slots` (given back in OnDone), or finishes at once with
  // RESOURCE_EXHAUSTED when none is free.
  LogStreamReactor(train::JobSupervisor& jobs, sys::FileWatchHub& hub, LogStreamSlots& slots,
                   train::LogFollowOptions options);

  void OnWriteDone(bool ok) override;
  void OnCancel() override;
  void OnDone() override;

 private:
  // Writes the next chunk, waits on the hub, or finishes. Takes mutex_;
  // gRPC calls are made after unlocking.
  void Pump();
  void FinishLocked(std::unique_lock<std::mutex>& lock, const grpc::Status& status);

  sys::FileWatchHub& hub_;
  LogStreamSlots& slots_;
  bool has_slot_ = false;
  std::mutex mutex_;
  std::optional<train::LogFollower> follower_;
  v1::LogChunk in_flight_;
  uint64_t ticket_ = 0;  // the hub wait now pending, if any
  bool writing_ = false;
  bool finished_ = false;
  bool done_ = false;  // OnDone began: wakeups do nothing
};

}  // namespace gpuctl::daemon
