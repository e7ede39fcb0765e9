// Something the agent wants people and scripts to know about: a guard kill,
// a memory warning, a job that started, ended or hit CUDA OOM.
#pragma once

#include <cstdint>
#include <string>

#include <nlohmann/json.hpp>

namespace gpuctl::events {

struct AgentEvent {
  uint64_t seq = 0;            // assigned by EventLog: 1, 2, 3..., rising across agent restarts (journaled)
  int64_t time_unix_ms = 0;
  std::string kind;            // "guard_kill", "guard_warning", "job_started", "job_ended", "cuda_oom", ...
  std::string job;             // the job it concerns, if any
  std::string message;         // one line for people
  nlohmann::json fields = nlohmann::json::object();  // kind-specific figures, for scripts
};

}  // namespace gpuctl::events
