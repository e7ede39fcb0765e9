#include "daemon/service/health_watch.h"

#include <algorithm>

#include <spdlog/spdlog.h>

namespace gpuctl::daemon {

void WatchHealthReactor::Deliver(const v1::HealthSnapshot& snapshot) {
  Update([&] { pending_ = snapshot; });
}

auto WatchHealthReactor::Produce(v1::HealthSnapshot& out, grpc::Status& /*end*/) -> Next {
  if (!pending_) return Next::kIdle;
  out = std::move(*pending_);
  pending_.reset();
  return Next::kWrite;
}

// After this the hub never delivers to `this` again (it delivers under its lock).
void WatchHealthReactor::Release() { hub_.Unsubscribe(this); }

HealthWatchHub::HealthWatchHub(SampleFn sample, const sys::Clock& clock)
    : sample_(std::move(sample)), clock_(clock), thread_([this] { Loop(); }) {}

HealthWatchHub::~HealthWatchHub() { Stop(); }

WatchHealthReactor* HealthWatchHub::Subscribe(std::chrono::milliseconds interval, OpenStreams* streams) {
  if (interval.count() == 0) interval = kDefaultInterval;
  interval = std::max(interval, kMinInterval);
  auto* reactor = new WatchHealthReactor(*this, streams);
  {
    std::lock_guard lock(mutex_);
    if (!stopping_) {
      subscribers_.push_back({reactor, interval, clock_.SteadyNow()});
      wake_.notify_one();
      return reactor;
    }
  }
  reactor->End(grpc::Status(grpc::StatusCode::UNAVAILABLE, "gpuctld is shutting down"));
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
  {
    std::lock_guard lock(mutex_);
    stopping_ = true;
    wake_.notify_all();
  }
  if (thread_.joinable()) thread_.join();
  // Each end is decided under the lock, so a stream that is cancelled right
  // now cannot be freed meanwhile (its Release waits for the lock), and
  // finished after it, so no OnDone can wait on a lock held here.
  std::vector<WatchHealthReactor*> to_finish;
  {
    std::lock_guard lock(mutex_);
    for (Subscriber& s : subscribers_) {
      if (s.reactor->MarkEnded(grpc::Status(grpc::StatusCode::UNAVAILABLE, "gpuctld is shutting down"))) {
        to_finish.push_back(s.reactor);
      }
    }
    subscribers_.clear();
  }
  for (WatchHealthReactor* reactor : to_finish) reactor->FinishEnded();
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
