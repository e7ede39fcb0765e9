// A job as the agent keeps it: the spec, where it runs, how it ended, and
// what its log told us. Saved as STATE_DIR/jobs/NAME/job.json.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "agents/train/job_gpu_memory.h"
#include "agents/train/job_spec.h"
#include "agents/train/log_event.h"
#include "agents/train/metrics.h"
#include "common/status.h"

namespace gpuctl::train {

// kOrphaned: a tmux session or job cgroup found at agent start that no
// record claims (an agent killed mid-start by an older build, a record
// deleted by hand): shown, watched and stoppable, never invisible.
// kUnreadable: a job.json that cannot be read or fails validation; it blocks
// its name until `gpuctl train rm NAME`.
// kQueued: waiting for its GPUs (no process yet); `train stop` cancels it.
enum class JobState {
  kStarting, kRunning, kSucceeded, kFailed, kStopped, kLost, kKilledByGuard, kOrphaned, kUnreadable, kQueued
};

// "starting", "running", "succeeded", "failed", "stopped", "lost",
// "killed_by_guard", "orphaned", "unreadable".
const char* JobStateName(JobState state);
std::optional<JobState> ParseJobState(std::string_view name);
// Starting, running or orphaned: the job may still be alive.
bool IsActive(JobState state);

struct JobEventRecord {
  LogEvent event;
  int64_t time_unix_ms = 0;  // when the agent read it
  bool operator==(const JobEventRecord&) const = default;
};

// An earlier run of the job, ended in CUDA OOM, that a remediation relaunched
// (or gave up on): kept so `train status` shows the lineage.
struct AttemptRecord {
  uint32_t attempt = 1;
  std::string run_id;
  std::string alloc_conf;
  std::vector<std::string> command;  // as it ran
  JobState state = JobState::kFailed;
  std::string state_reason;
  std::optional<uint64_t> step;               // the last step its log showed
  std::optional<Throughput> best_throughput;
  std::string log_path;                       // its own log, kept
  int64_t started_unix_ms = 0;
  int64_t ended_unix_ms = 0;
  std::vector<std::string> changes;           // what the relaunch after it changed
  std::string resumed_from;                   // the checkpoint it started from; empty: scratch
  uint64_t events = 0;                        // the events its log showed, kept and dropped
  bool operator==(const AttemptRecord&) const = default;
};

// Hang detection's view of a run (hang_watch.h): when it last made
// progress and what that was, the budget it has, and a hang it is in.
struct JobProgress {
  int64_t last_progress_unix_ms = 0;
  std::string last_progress;  // "step 120", "log output", "checkpoint written", "CPU time", "started"
  int64_t budget_ms = 0;
  std::string budget_source;  // "learned", "--hang-after", "--start-timeout"
  int64_t hung_since_unix_ms = 0;  // 0: not hung
  std::string dump_dir;            // this run's last dump (a hang's or `train dump`'s)
  bool operator==(const JobProgress&) const = default;
};

struct JobRecord {
  JobSpec spec;
  // This run of the job: in the record, every event, the cgroup's name
  // (PARENT/NAME@RUN) and the tmux session's environment (GPUCTL_RUN_ID).
  std::string run_id;
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
  // When a stop escalates to SIGKILL (wall clock), saved with the request so
  // that an agent restarted during the grace still finishes the stop.
  std::optional<int64_t> stop_deadline_unix_ms;
  // Set when the memory guard killed the job; the reason says why.
  std::optional<std::string> guard_kill_reason;
  std::string cgroup;  // the job's memory cgroup, empty when it has none
  std::string log_path;   // where output.log is written (in a container's rootfs for LXC)
  std::string exit_path;  // where the wrapper records the exit status
  // A container build waiting for the agent to place it in its cgroup: the
  // gate its wrapper waits at (container_build_gate.h), on the host. Cleared
  // once answered.
  std::string cgroup_gate;
  // A container job: signals from the host stop at pct exec, so the wrapper
  // inside starts the command in a session of its own and writes its pid
  // (as the container numbers it) to pid_path. The agent finds that
  // process's host pid and keeps it here; stop, the guard and liveness act
  // on it. inner_pgid is 0 when the command could not lead its own group.
  std::string pid_path;
  int64_t inner_pid = 0;
  int64_t inner_pgid = 0;
  std::optional<uint64_t> inner_start_time;
  uint64_t log_bytes = 0;
  uint64_t parsed_offset = 0;  // log bytes already read into events and metrics
  MetricsState metrics;
  std::vector<JobEventRecord> events;
  // This run's events dropped to keep it within its bounds (event_retention.h).
  uint64_t events_dropped = 0;
  // OOM remediation (spec.oom): the earlier attempts, oldest first; whether
  // this run's OOM end was decided on (relaunched or given up); the step the
  // last attempt reached, until this run passes it (oom_remediation_held).
  std::vector<AttemptRecord> attempts;
  bool oom_decided = false;
  std::optional<uint64_t> hold_step;
  JobProgress progress;
  // The agent stopped this run itself (a hang under --on-hang fail or
  // recover), saying why: its end is failed with this reason, not stopped.
  // relaunch: and it is to be relaunched from its checkpoint once ended.
  std::string agent_stop_reason;
  std::string agent_stop_cause;  // "hang", "gpu_fault"
  bool relaunch_after_stop = false;
  // Relaunches in a row that found no checkpoint newer than the last
  // (--max-restarts-without-progress gives up past it).
  uint32_t restarts_without_progress = 0;
  // Decided on by the checkpoint relaunch (relaunched, or given up on).
  bool relaunch_decided = false;
  // This run's memory on each GPU it uses (its processes', from NVML).
  std::vector<JobGpuMemory> gpu_memory;
  // Queued: since when (first come, first served), its place (1 = next),
  // and what it waits for ("1 GPU: GPU 0 held by job a, ...").
  int64_t queued_unix_ms = 0;
  uint32_t queue_position = 0;
  std::string waiting_for;
  // What this run really got, decided at launch (job_environment.h): its
  // argv (EffectiveCommand) and the variables gpuctl set in its environment.
  // Empty in records from before them.
  std::vector<std::string> run_command;
  std::map<std::string, std::string> run_env;
  // A run that ended failed: the last lines of its log (log_tail.h).
  std::vector<std::string> log_tail;
  // Every field, so that tests compare whole records (a field a round trip
  // drops shows as a difference).
  bool operator==(const JobRecord&) const = default;
};

nlohmann::json ToJson(const JobRecord& record);
// Errors: kInvalidArgument naming the field that is missing or malformed,
// or a value a record written by the agent cannot hold (a name outside
// [A-Za-z0-9._-], a relative path): records may have been edited or planted.
Result<JobRecord> JobRecordFromJson(const nlohmann::json& json);

nlohmann::json ToJson(const LogEvent& event);
LogEvent LogEventFromJson(const nlohmann::json& json);

}  // namespace gpuctl::train
