#include "agents/train/job_end.h"

#include "common/units.h"

namespace gpuctl::train {
namespace {

// The shell's (and execvp's) codes for a command that never ran.
std::string ExitReason(int code) {
  std::string reason = "exited " + std::to_string(code);
  if (code == 127) reason += ": command not found";
  if (code == 126) reason += ": not executable";
  return reason;
}

// "200 MiB" for a whole number of MiB (as --mem-limit is usually given).
std::string LimitText(uint64_t bytes) {
  constexpr uint64_t kMiB = 1024 * 1024;
  if (bytes > 0 && bytes % kMiB == 0 && bytes / kMiB < 1024) return std::to_string(bytes / kMiB) + " MiB";
  return FormatBytes(bytes);
}

}  // namespace

JobEnd DecideJobEnd(const ExitStatusReading& exit, bool stop_requested,
                    const std::optional<std::string>& guard_kill_reason) {
  JobEnd end;
  if (exit.kind == ExitStatusReading::Kind::kValue) {
    end.exit_code = exit.value;
    if (exit.value > 128 && exit.value <= 128 + 64) end.term_signal = exit.value - 128;
  }
  if (guard_kill_reason) {
    end.state = JobState::kKilledByGuard;
    end.reason = *guard_kill_reason;
  } else if (stop_requested) {
    end.state = JobState::kStopped;
    end.reason = "stopped by request";
  } else if (exit.kind == ExitStatusReading::Kind::kValue) {
    if (exit.value == 0) {
      end.state = JobState::kSucceeded;
      end.reason = "exited 0";
    } else {
      end.state = JobState::kFailed;
      end.reason = end.term_signal ? "killed by signal " + std::to_string(*end.term_signal)
                                   : ExitReason(exit.value);
    }
  } else if (exit.kind == ExitStatusReading::Kind::kUnreadable) {
    // It ended (its processes are gone) but how is unknown: not a success,
    // and not the "no status at all" of a SIGKILL or a reboot.
    end.state = JobState::kFailed;
    end.reason = "ended, but its exit status is unreadable: " + exit.why;
  } else {
    end.state = JobState::kLost;
    end.reason = "its processes are gone and no exit status was written (killed with SIGKILL, or the host rebooted)";
  }
  return end;
}

JobEnd DecideRunEnd(const RunEndFacts& facts) {
  using Kind = ExitStatusReading::Kind;
  JobEnd end = DecideJobEnd(facts.exit, facts.stop_requested, facts.guard_kill_reason);
  if (facts.failure && !facts.stop_requested && !facts.guard_kill_reason) {
    end.state = JobState::kFailed;
    end.reason = *facts.failure;
  }
  if (facts.stop_requested && !facts.agent_stop_reason.empty() && !facts.guard_kill_reason &&
      end.state == JobState::kStopped) {
    end.state = JobState::kFailed;
    end.reason = facts.agent_stop_reason;
  }
  if (facts.mem_limit_kill && end.state == JobState::kFailed && !facts.failure && facts.agent_stop_reason.empty()) {
    end.reason = "exceeded " +
                 std::string(facts.mem_limit_kill->from_flag ? "--mem-limit " : "the agent's default memory limit ") +
                 LimitText(facts.mem_limit_kill->limit_bytes) + ": " + end.reason;
  }
  if (facts.cwd_gone && end.state == JobState::kFailed && end.reason == "exited 126: not executable") {
    end.reason = "exited 126: cannot enter --cwd " + *facts.cwd_gone;
  }
  if (facts.never_seen_launched && facts.exit.kind == Kind::kMissing) {
    end.state = JobState::kFailed;
    end.reason = "never launched: the agent stopped while starting it";
  }
  if (facts.disk_full) {
    end.reason = facts.exit.kind == Kind::kMissing
                     ? "its processes are gone and no exit status could be recorded: " + *facts.disk_full
                     : end.reason + "; " + *facts.disk_full;
  }
  return end;
}

JobEndedEvent JobEnded(const JobRecord& record) {
  JobEndedEvent event;
  event.message = std::string(JobStateName(record.state)) + ": " + record.state_reason;
  event.fields = {{"state", JobStateName(record.state)},
                  {"exit_code", record.exit_code ? nlohmann::json(*record.exit_code) : nlohmann::json(nullptr)}};
  return event;
}

}  // namespace gpuctl::train
