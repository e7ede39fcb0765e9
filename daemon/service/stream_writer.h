// The one shape of a server stream in gpuctld (logs, events, health,
// provisioning): a gRPC ServerWriteReactor that writes one message at a time,
// pulled from its subclass when the last write is done or when a producer
// wakes it, and that is finished exactly once on every path:
//
//   - the subclass has nothing more (Produce says kEnd),
//   - the server ends it (End, OpenStreams::EndAll at shutdown),
//   - the client goes away: OnCancel and a failed OnWriteDone, in either
//     order (gRPC promises none), with or without a write in flight,
//   - the server is shut down (gRPC cancels every call at its deadline).
//
// Finish is never called while a write is outstanding: an end decided during
// a write is carried out by that write's OnWriteDone. gRPC runs OnDone only
// after Finish, and OnDone is where everything is given back (Release), so a
// stream that is finished on every path never leaks its slot, its
// subscription or its memory, and never holds the server's shutdown open.
//
// Locking: one mutex per stream guards the state here and whatever the
// subclass's Produce reads (the subclass takes it through Update or Locked).
// gRPC calls (StartWrite, Finish) are made after unlocking. Produce runs
// under it and must not block.
#pragma once

#include <atomic>
#include <mutex>
#include <optional>
#include <utility>

#include <grpcpp/grpcpp.h>

#include "daemon/service/open_streams.h"

namespace gpuctl::daemon {

template <typename Message>
class StreamWriter : public grpc::ServerWriteReactor<Message>, public EndableStream {
 public:
  // Something may be ready to write (a producer's wakeup): writes it unless a
  // write is in flight, in which case its OnWriteDone pulls it. Any thread.
  void Wake() {
    Update([] {});
  }
  // Runs `change` under the stream's lock (to hand the subclass something
  // its Produce will read), then writes if a write can start. Any thread.
  template <typename Change>
  void Update(Change&& change) {
    std::unique_lock lock(mutex_);
    std::forward<Change>(change)();
    Step(lock);
  }
  // Runs `read` under the stream's lock and returns what it returns; no write
  // starts. For state the subclass shares with Produce.
  template <typename Read>
  auto Locked(Read&& read) {
    std::lock_guard lock(mutex_);
    return std::forward<Read>(read)();
  }
  // Ends the stream from the server side with `status`. Any thread, with no
  // lock held that Release takes.
  void End(const grpc::Status& status) {
    if (MarkEnded(status)) FinishEnded();
  }

  bool MarkEnded(const grpc::Status& status) final {
    std::lock_guard lock(mutex_);
    if (!end_) end_ = status;
    if (writing_ || finished_) return false;  // the write's OnWriteDone finishes
    finished_ = true;
    return true;
  }
  void FinishEnded() final {
    grpc::Status status;
    {
      std::lock_guard lock(mutex_);
      status = *end_;
    }
    this->Finish(status);
  }

 protected:
  enum class Next {
    kWrite,  // `out` holds the next message
    kIdle,   // nothing now; a producer will call Wake or Update
    kEnd,    // nothing more; finish with `end`
  };

  // `streams` (optional) learns of this stream once it starts, so shutdown
  // can end it; it must outlive the stream.
  explicit StreamWriter(OpenStreams* streams = nullptr) : streams_(streams) {}
  ~StreamWriter() override = default;

  // Subclass constructors call this last: it registers the stream and makes
  // the first write (or finish). Before it, wakeups do nothing.
  void Start() {
    {
      std::unique_lock lock(mutex_);
      started_ = true;
      Step(lock);
    }
    if (streams_ != nullptr) streams_->Add(*this);
  }

  // Under the stream's lock, only while no write is in flight and no end is
  // decided: the next message, or why there is none.
  virtual Next Produce(Message& out, grpc::Status& end) = 0;
  // The client is gone (OnCancel, or a write failed): stop the work behind
  // the stream early. No lock held; may be called twice. Default: nothing.
  virtual void ClientGone() {}
  // In OnDone, with no lock held, before `this` is deleted: after it
  // returns, no producer may call into the stream again or be running in it
  // (unsubscribe, cancel waits), and its slot is given back.
  virtual void Release() {}

  // A producer on its own thread that may outlive the RPC (a provisioning
  // run) keeps the stream's memory until it lets go. Without it, OnDone
  // deletes the stream.
  void Retain() { refs_.fetch_add(1); }
  void Drop() {
    if (refs_.fetch_sub(1) == 1) delete this;
  }

 private:
  void OnWriteDone(bool ok) final {
    if (!ok) ClientGone();
    std::unique_lock lock(mutex_);
    writing_ = false;
    // Give the message's memory back now, not at the next write (move
    // assignment swaps the buffers into the temporary).
    in_flight_ = Message();
    if (!ok && !end_) end_ = grpc::Status(grpc::StatusCode::CANCELLED, "the client went away");
    Step(lock);
  }

  void OnCancel() final {
    ClientGone();
    std::unique_lock lock(mutex_);
    if (!end_) end_ = grpc::Status(grpc::StatusCode::CANCELLED, "the client went away");
    Step(lock);
  }

  void OnDone() final {
    if (streams_ != nullptr) streams_->Remove(*this);
    Release();
    // A producer that was inside Step has left it (Release waited for it,
    // or it found finished_ and did nothing).
    { std::lock_guard lock(mutex_); }
    Drop();
  }

  // The state machine: start the next write, finish, or wait. Every path
  // that can end a stream comes through here or MarkEnded, and both set
  // finished_ before the one Finish.
  void Step(std::unique_lock<std::mutex>& lock) {
    if (!started_ || writing_ || finished_) return;
    if (!end_) {
      grpc::Status end;
      switch (Produce(in_flight_, end)) {
        case Next::kWrite:
          writing_ = true;
          lock.unlock();
          this->StartWrite(&in_flight_);
          return;
        case Next::kIdle:
          return;
        case Next::kEnd:
          end_ = std::move(end);
          break;
      }
    }
    finished_ = true;
    grpc::Status status = *end_;
    lock.unlock();
    this->Finish(status);
  }

  OpenStreams* const streams_;
  std::atomic<int> refs_{1};  // gRPC's, dropped in OnDone, and Retain's
  std::mutex mutex_;
  Message in_flight_;
  std::optional<grpc::Status> end_;  // decided: no more writes
  bool started_ = false;
  bool writing_ = false;
  bool finished_ = false;  // Finish was called or is about to be
};

}  // namespace gpuctl::daemon
