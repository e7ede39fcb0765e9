// A Clock that moves only when a test says so.
#pragma once

#include <chrono>
#include <condition_variable>
#include <functional>
#include <mutex>

#include "agents/sys/clock.h"

namespace gpuctl::testing {

class FakeClock final : public sys::Clock {
 public:
  // Starts away from the epoch so that "time zero" is never special by accident.
  FakeClock()
      : steady_(std::chrono::hours(1)),
        wall_(std::chrono::sys_days(std::chrono::year(2025) / 1 / 1)) {}

  std::chrono::steady_clock::time_point SteadyNow() const override {
    std::lock_guard lock(mutex_);
    return steady_;
  }
  std::chrono::system_clock::time_point WallNow() const override {
    std::lock_guard lock(mutex_);
    return wall_;
  }

  // Returns when `done()` or once a test has moved the clock to `deadline`.
  // Polls every millisecond of real time: Advance() cannot reach the
  // waiter's mutex, and a missed wakeup must not hang a test.
  void WaitUntil(std::unique_lock<std::mutex>& lock, std::condition_variable& wake,
                 std::chrono::steady_clock::time_point deadline, const std::function<bool()>& done) const override {
    while (!done() && SteadyNow() < deadline) wake.wait_for(lock, std::chrono::milliseconds(1));
  }

  // Moves both clocks forward together, as real time would.
  void Advance(std::chrono::steady_clock::duration d) {
    std::lock_guard lock(mutex_);
    steady_ += d;
    wall_ += std::chrono::duration_cast<std::chrono::system_clock::duration>(d);
  }
  void SetWall(std::chrono::system_clock::time_point t) {
    std::lock_guard lock(mutex_);
    wall_ = t;
  }

 private:
  mutable std::mutex mutex_;
  std::chrono::steady_clock::time_point steady_;
  std::chrono::system_clock::time_point wall_;
};

}  // namespace gpuctl::testing
