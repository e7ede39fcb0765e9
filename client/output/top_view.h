// `gpuctl top`'s screen: nodes x GPUs (with each node's free memory and PSI)
// and the nodes' jobs (state, step, loss, throughput, GPU memory, last
// event). Pure: the command gathers, these render.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "gpuctl/v1/health.pb.h"
#include "gpuctl/v1/jobs.pb.h"

namespace gpuctl::client {

struct TopNode {
  std::string node;
  std::optional<v1::HealthSnapshot> health;  // empty: `error` says why
  std::optional<v1::ListJobsResponse> jobs;
  std::string error;
  bool reached = true;
};

// The header line, the GPU table, a blank line and the job table.
std::string TopToText(const std::vector<TopNode>& nodes, int64_t now_unix_ms);
// {"time_unix_ms", "nodes": [{"node", "reached", "error"|null, "health"|null, "jobs": [...]}]}
// with health and jobs as `health -o json` and `train list -o json` give them.
nlohmann::json TopToJson(const std::vector<TopNode>& nodes, int64_t now_unix_ms);
// `screen` drawn over the last one in place on a terminal: home, each line
// with the rest of its row cleared, then whatever a longer last screen left
// below. Shared by top and `train list --watch`.
std::string RepaintScreen(const std::string& screen);
// "cuda_oom 2m ago", or "-".
std::string LastEventText(const v1::Job& job, int64_t now_unix_ms);

}  // namespace gpuctl::client
