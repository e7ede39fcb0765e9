// A few worker threads for RPCs that must wait (stopping a job waits out its
// grace period), so gRPC's callback threads never block. Bounded: when all
// workers are busy and the queue is full, Post refuses instead of growing.
#pragma once

#include <condition_variable>
#include <deque>
#include <functional>
#include <mutex>
#include <thread>
#include <vector>

namespace gpuctl::daemon {

class WorkQueue {
 public:
  WorkQueue(size_t workers, size_t max_queued);
  ~WorkQueue();  // runs what is queued, then joins

  // False when the queue is full or shutting down.
  [[nodiscard]] bool Post(std::function<void()> task);
  void Shutdown();

 private:
  void Work();
  size_t max_queued_;
  std::mutex mutex_;
  std::condition_variable ready_;
  std::deque<std::function<void()>> tasks_;
  bool stopping_ = false;
  std::vector<std::thread> workers_;
};

}  // namespace gpuctl::daemon
