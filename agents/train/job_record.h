// A job as the agent keeps it: the spec, where it runs, how it ended, and
// what its log told us. Saved as STATE_DIR/jobs/NAME/job.json.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "agents/train/job_spec.h"
#include "agents/train/log_event.h"
#include "agents/train/metrics.h"
#include "common/status.h"

namespace gpuctl::train {

enum class JobState { kStarting, kRunning, kSucceeded, kFailed, kStopped, kLost, kKilledByGuard };

// "starting", "running", "succeeded", "failed", "stopped", "lost", "killed_by_guard".
const char* JobStateName(JobState state);
std::optional<JobState> ParseJobState(std::string_view name);
// Starting or running: the job may still be alive.
bool IsActive(JobState state);

struct JobEventRecord {
  LogEvent event;
  int64_t time_unix_ms = 0;  // when the agent read it
};

struct JobRecord {
  JobSpec spec;
  JobState state = JobState::kStarting;
  std::string state_reason;
  std::optional<int> exit_code;
  std::optional<int> term_signal;
  int64_t pid = 0;   // the job's wrapper: the tmux pane process, leader of its group
  int64_t pgid = 0;
  std::optional<uint64_t> pid_start_time;  // tells a re-used pid from ours
  std::string tmux_session;
  int64_t created_unix_ms = 0;
  int64_t started_unix_ms = 0;
  int64_t ended_unix_ms = 0;
  uint32_t restart_count = 0;
  bool stop_requested = false;
  // Set when the memory guard killed the job; the reason says why.
  std::optional<std::string> guard_kill_reason;
  std::string cgroup;  // the job's memory cgroup, empty when it has none
  std::string log_path;   // where output.log is written (in a container's rootfs for LXC)
  std::string exit_path;  // where the wrapper records the exit status
  uint64_t log_bytes = 0;
  uint64_t parsed_offset = 0;  // log bytes already read into events and metrics
  MetricsState metrics;
  std::vector<JobEventRecord> events;
};

nlohmann::json ToJson(const JobRecord& record);
// Errors: kInvalidArgument naming the field that is missing or malformed.
Result<JobRecord> JobRecordFromJson(const nlohmann::json& json);

nlohmann::json ToJson(const LogEvent& event);
LogEvent LogEventFromJson(const nlohmann::json& json);

}  // namespace gpuctl::train
