// Time is injected: code asks a Clock, tests drive a fake one. Waiting goes
// through the clock too, so loops that sleep until a deadline (the job
// supervisor's ticks, a stop's grace) are tested without real time.
#pragma once

#include <chrono>
#include <condition_variable>
#include <functional>
#include <mutex>

namespace gpuctl::sys {

class Clock {
 public:
  virtual ~Clock() = default;
  virtual std::chrono::steady_clock::time_point SteadyNow() const = 0;
  virtual std::chrono::system_clock::time_point WallNow() const = 0;
  // With `lock` held on the mutex `wake` is used with: returns once `done()`
  // is true (checked whenever `wake` is notified) or SteadyNow() has reached
  // `deadline`. A fake clock returns when a test moves it past `deadline`.
  virtual void WaitUntil(std::unique_lock<std::mutex>& lock, std::condition_variable& wake,
                         std::chrono::steady_clock::time_point deadline, const std::function<bool()>& done) const = 0;
};

class RealClock final : public Clock {
 public:
  std::chrono::steady_clock::time_point SteadyNow() const override {
    return std::chrono::steady_clock::now();
  }
  std::chrono::system_clock::time_point WallNow() const override {
    return std::chrono::system_clock::now();
  }
  void WaitUntil(std::unique_lock<std::mutex>& lock, std::condition_variable& wake,
                 std::chrono::steady_clock::time_point deadline, const std::function<bool()>& done) const override {
    wake.wait_until(lock, deadline, done);
  }
};

// A pause measured on `clock` with nothing to cut it short: between two
// polls of something that has no event to wait on (a killed process going, a
// job's state, a remote agent coming up). A fake clock returns once a test
// has moved it past the pause.
inline void SleepFor(const Clock& clock, std::chrono::steady_clock::duration pause) {
  std::mutex mutex;
  std::condition_variable never;
  std::unique_lock lock(mutex);
  clock.WaitUntil(lock, never, clock.SteadyNow() + pause, [] { return false; });
}

}  // namespace gpuctl::sys
