// Where /metrics' figures come from in the agent: a health sample, the job
// list as ListJobs gives it, and the agent's own /proc/self/status.
#pragma once

#include "agents/health/health_sampler.h"
#include "agents/sys/clock.h"
#include "agents/sys/host_fs.h"
#include "daemon/metrics/metrics_server.h"
#include "daemon/service/agent_service.h"

namespace gpuctl::daemon {

MetricsServer::Collect AgentMetricsSource(health::HealthSampler& sampler, const AgentService& service,
                                          const sys::HostFs& fs, sys::Clock& clock);

}  // namespace gpuctl::daemon
