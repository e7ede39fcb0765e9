#include "daemon/service/work_queue.h"

namespace gpuctl::daemon {

WorkQueue::WorkQueue(size_t workers, size_t max_queued) : max_queued_(max_queued) {
  for (size_t i = 0; i < workers; ++i) workers_.emplace_back([this] { Work(); });
}

WorkQueue::~WorkQueue() { Shutdown(); }

bool WorkQueue::Post(std::function<void()> task) {
  std::lock_guard lock(mutex_);
  if (stopping_ || tasks_.size() >= max_queued_) return false;
  tasks_.push_back(std::move(task));
  ready_.notify_one();
  return true;
}

void WorkQueue::Shutdown() {
  {
    std::lock_guard lock(mutex_);
    stopping_ = true;
  }
  ready_.notify_all();
  for (std::thread& t : workers_) {
    if (t.joinable()) t.join();
  }
}

void WorkQueue::Work() {
  std::unique_lock lock(mutex_);
  while (true) {
    ready_.wait(lock, [&] { return stopping_ || !tasks_.empty(); });
    if (tasks_.empty()) return;  // stopping, and nothing left to run
    std::function<void()> task = std::move(tasks_.front());
    tasks_.pop_front();
    lock.unlock();
    task();
    lock.lock();
  }
}

}  // namespace gpuctl::daemon
