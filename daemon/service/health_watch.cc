#include "daemon/service/health_watch.h"

#include <algorithm>

#include <spdlog/spdlog.h>

namespace gpuctl::daemon {

void WatchHealthReactor::Deliver(const v1::HealthSnapshot& snapshot) {
  std::unique_lock lock(mutex_);
  if (finished_ || finish_status_) return;
  pending_ = snapshot;
  WriteOrFinishLocked(lock);
}

void WatchHealthReactor::FinishFromServer(const grpc::Status& status) {
  std::unique_lock lock(mutex_);
  if (finished_) return;
  pending_.reset();
  finish_status_ = status;
  WriteOrFinishLocked(lock);
}

// Starts the next write, or finishes once nothing is in flight. gRPC calls
// are made after unlocking: a reaction may run inline on this thread.
void WatchHealthReactor::WriteOrFinishLocked(std::unique_lock<std::mutex>& lock) {
  if (writing_ || finished_) return;
  if (finish_status_) {
    finished_ = true;
    grpc::Status status = *finish_status_;
    lock.unlock();
    Finish(status);
    return;
  }
  if (!pending_) return;
  in_flight_ = std::move(*pending_);
  pending_.reset();
  writing_ = true;
  lock.unlock();
  StartWrite(&in_flight_);
}

void WatchHealthReactor::OnWriteDone(bool ok) {
  std::unique_lock lock(mutex_);
  writing_ = false;
  if (!ok && !finish_status_) {
    // The client went away; OnCancel follows and unsubscribes.
    finish_status_ = grpc::Status(grpc::StatusCode::CANCELLED, "stream closed by client");
  }
  WriteOrFinishLocked(lock);
}

void WatchHealthReactor::OnCancel() {
  hub_.Unsubscribe(this);
  std::unique_lock lock(mutex_);
  if (!finish_status_) finish_status_ = grpc::Status::CANCELLED;
  pending_.reset();
  WriteOrFinishLocked(lock);
}

void WatchHealthReactor::OnDone() {
  hub_.Unsubscribe(this);
  delete this;
}

HealthWatchHub::HealthWatchHub(SampleFn sample, const sys::Clock& clock)
    : sample_(std::move(sample)), clock_(clock), thread_([this] { Loop(); }) {}

HealthWatchHub::~HealthWatchHub() { Stop(); }

WatchHealthReactor* HealthWatchHub::Subscribe(std::chrono::milliseconds interval) {
  if (interval.count() == 0) interval = kDefaultInterval;
  interval = std::max(interval, kMinInterval);
  auto* reactor = new WatchHealthReactor(*this);
  {
    std::lock_guard lock(mutex_);
    if (!stopping_) {
      subscribers_.push_back({reactor, interval, clock_.SteadyNow()});
      wake_.notify_one();
      return reactor;
    }
  }
  reactor->FinishFromServer(grpc::Status(grpc::StatusCode::UNAVAILABLE, "gpuctld is shutting down"));
  return reactor;
}

void HealthWatchHub::Unsubscribe(WatchHealthReactor* reactor) {
  std::lock_guard lock(mutex_);
  std::erase_if(subscribers_, [&](const Subscriber& s) { return s.reactor == reactor; });
}

size_t HealthWatchHub::subscriber_count() {
  std::lock_guard lock(mutex_);
  return subscribers_.size();
}

void HealthWatchHub::Stop() {
  std::vector<Subscriber> remaining;
  {
    std::lock_guard lock(mutex_);
    stopping_ = true;
    wake_.notify_all();
  }
  if (thread_.joinable()) thread_.join();
  // Under the lock, so a stream that is cancelled right now cannot be freed
  // (OnDone -> Unsubscribe waits for us). gRPC never runs reactions inline
  // from Finish/StartWrite, so this cannot re-enter.
  std::lock_guard lock(mutex_);
  remaining.swap(subscribers_);
  for (Subscriber& s : remaining) {
    s.reactor->FinishFromServer(grpc::Status(grpc::StatusCode::UNAVAILABLE, "gpuctld is shutting down"));
  }
}

void HealthWatchHub::Loop() {
  std::unique_lock lock(mutex_);
  while (!stopping_) {
    if (subscribers_.empty()) {
      wake_.wait(lock, [&] { return stopping_ || !subscribers_.empty(); });
      continue;
    }
    auto now = clock_.SteadyNow();
    auto earliest = std::min_element(subscribers_.begin(), subscribers_.end(),
                                     [](const Subscriber& a, const Subscriber& b) { return a.next_due < b.next_due; })
                        ->next_due;
    if (earliest > now) {
      // Real time, not the injected clock: the wait must end when it is due.
      wake_.wait_for(lock, earliest - now);
      continue;
    }
    lock.unlock();
    Result<v1::HealthSnapshot> snapshot = sample_();
    lock.lock();
    if (stopping_) break;
    now = clock_.SteadyNow();
    for (Subscriber& s : subscribers_) {
      if (s.next_due > now) continue;
      // Next tick on the subscriber's own grid; skip ticks missed while sampling.
      while (s.next_due <= now) s.next_due += s.interval;
      if (snapshot.ok()) s.reactor->Deliver(*snapshot);
    }
    if (!snapshot.ok()) spdlog::warn("health sample failed: {}", snapshot.status().ToString());
  }
}

}  // namespace gpuctl::daemon
