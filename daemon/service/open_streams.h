// The server streams an agent has open, so that shutdown can end every one
// of them at once, whatever it waits on (a file, the event ring, the health
// hub, a provisioning run). Without this a follower that waits on a quiet
// log holds the gRPC server open until its shutdown deadline cancels it.
#pragma once

#include <mutex>
#include <unordered_set>

#include <grpcpp/grpcpp.h>

namespace gpuctl::daemon {

// What an owner may do to an open stream whatever its message type. Ending
// is two steps so that an owner can decide under its own lock and call into
// gRPC after dropping it: a stream cannot be freed between the two, because
// gRPC runs OnDone (which frees it) only after Finish.
class EndableStream {
 public:
  virtual ~EndableStream() = default;
  // The stream ends with `status` (after the write in flight, if any); one
  // that has already ended ignores it. True when the caller must now call
  // FinishEnded(), with no lock held that the stream's OnDone takes.
  virtual bool MarkEnded(const grpc::Status& status) = 0;
  // Sends the status MarkEnded decided. After it, `this` may be gone.
  virtual void FinishEnded() = 0;
};

class OpenStreams {
 public:
  // A stream adds itself once it is ready to write and removes itself in
  // OnDone. Added after EndAll, it is ended at once with EndAll's status.
  void Add(EndableStream& stream);
  void Remove(EndableStream& stream);
  // Ends every open stream, and every later one, with `status`. Idempotent;
  // does not wait for them to finish (the gRPC server's shutdown does).
  void EndAll(const grpc::Status& status);
  size_t size() const;

 private:
  mutable std::mutex mutex_;
  std::unordered_set<EndableStream*> open_;
  bool ended_ = false;
  grpc::Status end_status_;
};

}  // namespace gpuctl::daemon
