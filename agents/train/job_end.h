// How a run ended, decided from what is known when its processes are gone:
// the exit status the wrapper wrote (or not, or garbage), whether a stop was
// asked, whether the guard or the build governor killed it, whether its
// launch was ever seen, whether its disk is full. Pure, so each case is a
// unit test; the run monitor gathers the facts and applies the answer.
#pragma once

#include <cstdint>
#include <optional>
#include <string>

#include <nlohmann/json.hpp>

#include "agents/train/exit_status.h"
#include "agents/train/job_record.h"
#include "common/event_kinds.h"

namespace gpuctl::train {

struct JobEnd {
  JobState state = JobState::kLost;
  std::string reason;
  std::optional<int> exit_code;
  std::optional<int> term_signal;
};

// `guard_kill_reason`: set when the guard killed this run. The guard and a
// requested stop explain any exit (a 143 after a stop is "stopped").
JobEnd DecideJobEnd(const ExitStatusReading& exit, bool stop_requested,
                    const std::optional<std::string>& guard_kill_reason);

// Everything known of a run when its processes are gone.
struct RunEndFacts {
  ExitStatusReading exit;
  bool stop_requested = false;
  std::optional<std::string> guard_kill_reason;  // the guard killed it, saying why
  // The build governor killed it (it could not fit its budget), saying why.
  std::optional<std::string> failure;
  // The agent stopped it itself (a hang), saying why: failed, not stopped.
  std::string agent_stop_reason;
  // Recorded as starting and never seen launched (no pane, no start time).
  bool never_seen_launched = false;
  // Set when the disk holding its log is full: what to say of it.
  std::optional<std::string> disk_full;
  // The kernel's OOM killer killed in the run's own memory cgroup: its limit
  // then, and whether the user gave it (--mem-limit) or it was the agent's
  // default.
  struct MemLimitKill {
    uint64_t limit_bytes = 0;
    bool from_flag = false;
  };
  std::optional<MemLimitKill> mem_limit_kill;
  // A host job's --cwd that is no directory now: the wrapper's 126 (it
  // could not enter it) is that, not a command that is not executable.
  std::optional<std::string> cwd_gone;
};

// DecideJobEnd (which names the shell's 127 "command not found" and 126
// "not executable"), then what it cannot know: a kill by the run's own
// memory limit ("exceeded --mem-limit 200 MiB: killed by signal 9"); the governor's failure where no
// stop or guard kill explains the end; "never launched" for a run never
// seen launched that left no exit status; a full disk named in the reason
// (as the cause when no exit status could be recorded).
JobEnd DecideRunEnd(const RunEndFacts& facts);

// The job_ended event of a run that has ended, built one way whoever ended it
// (the run monitor, a stop of a queued job, a queued start that failed):
// message "<state>: <reason>", fields {"state": "failed", "exit_code": 1 or
// null}; the job table adds the run id when it publishes it.
struct JobEndedEvent {
  const char* kind = event_kind::kJobEnded;
  std::string message;
  nlohmann::json fields;
};
JobEndedEvent JobEnded(const JobRecord& record);

}  // namespace gpuctl::train
