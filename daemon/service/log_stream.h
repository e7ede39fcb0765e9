// StreamLogs: a LogFollower on a thread of its own feeds this reactor
// through a queue of at most two chunks, so the follower waits for a slow
// client instead of buffering without bound, and gRPC threads never block.
#pragma once

#include <condition_variable>
#include <deque>
#include <mutex>
#include <optional>
#include <thread>

#include <grpcpp/grpcpp.h>

#include "agents/train/log_follower.h"
#include "gpuctl/v1/jobs.pb.h"

namespace gpuctl::daemon {

class LogStreamReactor final : public grpc::ServerWriteReactor<v1::LogChunk> {
 public:
  LogStreamReactor(train::JobSupervisor& jobs, train::LogFollowOptions options);

  void OnWriteDone(bool ok) override;
  void OnCancel() override;
  void OnDone() override;

 private:
  static constexpr size_t kMaxQueued = 2;

  // Follower thread: blocks while the queue is full. False once cancelled.
  bool Push(uint64_t offset, std::string_view data);
  void Close(const grpc::Status& status);
  void StartNextLocked(std::unique_lock<std::mutex>& lock);

  train::LogFollower follower_;
  std::mutex mutex_;
  std::condition_variable space_;
  std::deque<v1::LogChunk> queue_;
  v1::LogChunk in_flight_;
  bool writing_ = false;
  bool cancelled_ = false;
  bool finished_ = false;
  std::optional<grpc::Status> finish_status_;
  std::thread thread_;
};

}  // namespace gpuctl::daemon
