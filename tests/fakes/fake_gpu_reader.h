// A GpuReader that returns whatever report the test set, and counts reads so
// tests can check caching.
#pragma once

#include <mutex>
#include <utility>

#include "agents/sys/gpu_reader.h"

namespace gpuctl::testing {

class FakeGpuReader final : public sys::GpuReader {
 public:
  sys::GpuReport Read() override {
    std::lock_guard lock(mutex_);
    ++reads_;
    return report_;
  }

  void SetReport(sys::GpuReport report) {
    std::lock_guard lock(mutex_);
    report_ = std::move(report);
  }
  int reads() const {
    std::lock_guard lock(mutex_);
    return reads_;
  }

 private:
  mutable std::mutex mutex_;
  sys::GpuReport report_;
  int reads_ = 0;
};

}  // namespace gpuctl::testing
