#include "agents/health/health_sampler.h"

namespace gpuctl::health {

HealthSampler::HealthSampler(const sys::HostFs& fs, sys::GpuReader& gpu_reader,
                             const sys::Clock& clock, std::chrono::milliseconds gpu_max_age)
    : host_(fs), gpu_reader_(gpu_reader), clock_(clock), gpu_max_age_(gpu_max_age) {}

Result<HealthSnapshot> HealthSampler::Sample() {
  Result<HostHealth> host = host_.Sample();
  if (!host.ok()) return host.status();
  HealthSnapshot snapshot;
  snapshot.sampled_at = clock_.WallNow();
  snapshot.host = std::move(host).value();
  {
    // One GPU read at a time: NVML and nvidia-smi are not worth racing, and
    // concurrent callers share the fresh result.
    std::lock_guard lock(gpu_mutex_);
    auto now = clock_.SteadyNow();
    if (!gpu_cache_ || now - gpu_cache_time_ >= gpu_max_age_) {
      gpu_cache_ = gpu_reader_.Read();
      gpu_cache_time_ = clock_.SteadyNow();
    }
    snapshot.gpus = *gpu_cache_;
  }
  if (const GpuDrains* drains = drains_.load()) {
    for (sys::GpuDevice& gpu : snapshot.gpus.devices) {
      std::optional<GpuDrain> drain = drains->Find(gpu.uuid);
      if (!drain && !gpu.pci_bus_id.empty()) drain = drains->Find(gpu.pci_bus_id);
      if (drain) gpu.drain = sys::GpuDrainInfo{drain->reason, drain->xid, drain->message, drain->since_unix_ms, drain->manual};
    }
  }
  return snapshot;
}

}  // namespace gpuctl::health
