// What /metrics says, built at each scrape from the same snapshots the
// gRPC API serves (so `gpuctl -o json` and Prometheus agree): host memory,
// swap and PSI; each GPU by uuid; each job; the agent itself. Pure.
//
// Conventions (prometheus.io/docs/practices/naming): the gpuctl_ prefix,
// base units (_bytes, _seconds, _celsius, _watts, _ratio), _total for
// counters. Label cardinality is bounded: GPUs, and jobs, where a job that
// ended drops out kEndedJobRetention after it ended.
#pragma once

#include <chrono>
#include <cstdint>
#include <vector>

#include <prometheus/metric_family.h>

#include "gpuctl/v1/health.pb.h"
#include "gpuctl/v1/jobs.pb.h"

namespace gpuctl::daemon {

inline constexpr std::chrono::minutes kEndedJobRetention{10};

struct AgentSelf {
  uint64_t resident_bytes = 0;
  uint64_t threads = 0;
};

struct MetricsInput {
  const v1::HealthSnapshot* health = nullptr;  // null: the sample failed
  const v1::ListJobsResponse* jobs = nullptr;
  AgentSelf self;
  int64_t now_unix_ms = 0;
};

std::vector<prometheus::MetricFamily> BuildMetricFamilies(const MetricsInput& input);

// "running", "killed_by_guard": the words `gpuctl -o json` uses.
std::string JobStateWord(v1::JobState state);

}  // namespace gpuctl::daemon
