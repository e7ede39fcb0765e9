// Time is injected: code asks a Clock, tests drive a fake one.
#pragma once

#include <chrono>

namespace gpuctl::sys {

class Clock {
 public:
  virtual ~Clock() = default;
  virtual std::chrono::steady_clock::time_point SteadyNow() const = 0;
  virtual std::chrono::system_clock::time_point WallNow() const = 0;
};

class RealClock final : public Clock {
 public:
  std::chrono::steady_clock::time_point SteadyNow() const override {
    return std::chrono::steady_clock::now();
  }
  std::chrono::system_clock::time_point WallNow() const override {
    return std::chrono::system_clock::now();
  }
};

}  // namespace gpuctl::sys
