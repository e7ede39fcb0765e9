#include "agents/health/host_sampler.h"

#include <spdlog/spdlog.h>

namespace gpuctl::health {
namespace {

void LogOnce(std::atomic<bool>& logged, std::string_view what, std::string_view why) {
  if (logged.exchange(true)) return;
  spdlog::debug("host health: {} unavailable ({}); left unset", what, why);
}

void LogIfEmpty(std::string_view what, const std::string& value) {
  if (value.empty()) spdlog::debug("host health: {} unavailable; left empty", what);
}

}  // namespace

HostSampler::HostSampler(const sys::HostFs& fs) : fs_(fs) {
  static_facts_.hostname = fs_.ReadHostname();
  static_facts_.kernel = fs_.ReadKernelRelease();
  static_facts_.os_release = fs_.ReadOsPrettyName();
  static_facts_.cpus = fs_.ReadCpuCount();
  static_facts_.cgroup_version = fs_.DetectCgroupVersion();
  static_facts_.where = sys::DetectWhereRunning(fs_);
  LogIfEmpty("hostname", static_facts_.hostname);
  LogIfEmpty("kernel release", static_facts_.kernel);
  LogIfEmpty("os-release PRETTY_NAME", static_facts_.os_release);
  if (static_facts_.cpus == 0) spdlog::debug("host health: CPU count unavailable; left 0");
}

Result<HostHealth> HostSampler::Sample() const {
  Result<sys::Meminfo> meminfo = fs_.ReadMeminfo();
  if (!meminfo.ok()) return meminfo.status().Wrap("sampling host memory");
  HostHealth health = static_facts_;
  health.mem_total_bytes = meminfo->mem_total_bytes();
  health.mem_available_bytes = meminfo->mem_available_bytes();
  health.swap_total_bytes = meminfo->swap_total_bytes();
  health.swap_free_bytes = meminfo->swap_free_bytes();

  Result<sys::LoadAverage> load = fs_.ReadLoadavg();
  if (load.ok()) {
    health.load = *load;
  } else {
    LogOnce(logged_loadavg_, "load average", load.status().message());
  }
  Result<double> uptime = fs_.ReadUptime();
  if (uptime.ok()) {
    health.uptime_seconds = *uptime;
  } else {
    LogOnce(logged_uptime_, "uptime", uptime.status().message());
  }
  health.memory_pressure = fs_.ReadMemoryPressure();
  if (!health.memory_pressure) {
    LogOnce(logged_pressure_, "memory pressure (PSI)", "kernel without PSI or psi=0");
  }
  return health;
}

}  // namespace gpuctl::health
