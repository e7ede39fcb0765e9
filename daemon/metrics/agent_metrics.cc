#include "daemon/metrics/agent_metrics.h"

#include "agents/sys/proc_status.h"
#include "daemon/metrics/metric_families.h"

namespace gpuctl::daemon {

MetricsServer::Collect AgentMetricsSource(health::HealthSampler& sampler, const AgentService& service,
                                          const sys::HostFs& fs, sys::Clock& clock) {
  return [&sampler, &service, &fs, &clock] {
    Result<v1::HealthSnapshot> health = SampleHealthProto(sampler);
    v1::ListJobsResponse jobs = service.ListJobsSnapshot();
    MetricsInput input;
    input.health = health.ok() ? &*health : nullptr;
    input.jobs = &jobs;
    if (Result<std::string> status = fs.ReadFile("proc/self/status"); status.ok()) {
      sys::ProcessUsage usage = sys::ParseProcessUsage(*status);
      input.self.resident_bytes = usage.resident_bytes.value_or(0);
      input.self.threads = usage.threads.value_or(0);
    }
    input.now_unix_ms =
        std::chrono::duration_cast<std::chrono::milliseconds>(clock.WallNow().time_since_epoch()).count();
    return BuildMetricFamilies(input);
  };
}

}  // namespace gpuctl::daemon
