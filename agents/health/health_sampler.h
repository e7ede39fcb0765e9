// Combines host and GPU sampling into one HealthSnapshot. GPU reads can be
// slow (nvidia-smi takes tens of ms), so the last GPU report is reused while
// younger than `gpu_max_age`; host figures are always fresh.
#pragma once

#include <atomic>
#include <chrono>
#include <mutex>
#include <optional>

#include "agents/health/gpu_drains.h"
#include "agents/health/health_snapshot.h"
#include "agents/health/host_sampler.h"
#include "agents/sys/clock.h"
#include "agents/sys/gpu_reader.h"

namespace gpuctl::health {

class HealthSampler {
 public:
  HealthSampler(const sys::HostFs& fs, sys::GpuReader& gpu_reader, const sys::Clock& clock,
                std::chrono::milliseconds gpu_max_age = std::chrono::milliseconds(500));

  // Thread-safe.
  Result<HealthSnapshot> Sample();
  // Each GPU of a sample is marked with its drain, if `drains` holds one
  // (by UUID or PCI bus id). Set before sampling starts; may be null.
  // Atomic: the agent attaches its drains once jobs already sample.
  void SetDrains(const GpuDrains* drains) { drains_.store(drains); }

 private:
  HostSampler host_;
  sys::GpuReader& gpu_reader_;
  const sys::Clock& clock_;
  std::chrono::milliseconds gpu_max_age_;
  std::mutex gpu_mutex_;
  std::optional<sys::GpuReport> gpu_cache_;
  std::chrono::steady_clock::time_point gpu_cache_time_;
  std::atomic<const GpuDrains*> drains_{nullptr};
};

}  // namespace gpuctl::health
