#include "daemon/service/log_stream.h"

#include "daemon/service/status_convert.h"

namespace gpuctl::daemon {

LogStreamReactor::LogStreamReactor(train::JobSupervisor& jobs, train::LogFollowOptions options)
    : follower_(jobs, std::move(options)) {
  thread_ = std::thread([this] {
    Status s = follower_.Run([this](uint64_t offset, std::string_view data) { return Push(offset, data); });
    Close(ToGrpcStatus(s));
  });
}

bool LogStreamReactor::Push(uint64_t offset, std::string_view data) {
  std::unique_lock lock(mutex_);
  space_.wait(lock, [&] { return cancelled_ || queue_.size() < kMaxQueued; });
  if (cancelled_) return false;
  v1::LogChunk chunk;
  chunk.set_offset(offset);
  chunk.set_data(std::string(data));
  queue_.push_back(std::move(chunk));
  StartNextLocked(lock);
  return true;
}

void LogStreamReactor::Close(const grpc::Status& status) {
  std::unique_lock lock(mutex_);
  if (!finish_status_) finish_status_ = cancelled_ ? grpc::Status::CANCELLED : status;
  StartNextLocked(lock);
}

// Writes the next queued chunk, or finishes once the queue is drained and the
// follower is done. gRPC calls happen after unlocking.
void LogStreamReactor::StartNextLocked(std::unique_lock<std::mutex>& lock) {
  if (writing_ || finished_) return;
  if (!queue_.empty() && !cancelled_) {
    in_flight_ = std::move(queue_.front());
    queue_.pop_front();
    writing_ = true;
    space_.notify_all();
    lock.unlock();
    StartWrite(&in_flight_);
    return;
  }
  if (finish_status_ && (queue_.empty() || cancelled_)) {
    finished_ = true;
    grpc::Status status = *finish_status_;
    lock.unlock();
    Finish(status);
  }
}

void LogStreamReactor::OnWriteDone(bool ok) {
  std::unique_lock lock(mutex_);
  writing_ = false;
  if (!ok) {
    cancelled_ = true;
    space_.notify_all();
    lock.unlock();
    follower_.Cancel();
    lock.lock();
  }
  StartNextLocked(lock);
}

void LogStreamReactor::OnCancel() {
  {
    std::lock_guard lock(mutex_);
    cancelled_ = true;
    space_.notify_all();
  }
  follower_.Cancel();
}

void LogStreamReactor::OnDone() {
  // Finish was called by the follower thread as its last act, or after a
  // cancel that makes it return promptly: the join is short.
  follower_.Cancel();
  {
    std::lock_guard lock(mutex_);
    cancelled_ = true;
    space_.notify_all();
  }
  if (thread_.joinable()) thread_.join();
  delete this;
}

}  // namespace gpuctl::daemon
