#include "client/output/job_state.h"

namespace gpuctl::client {

const char* JobStateName(v1::JobState state) {
  switch (state) {
    case v1::JOB_STATE_STARTING: return "starting";
    case v1::JOB_STATE_RUNNING: return "running";
    case v1::JOB_STATE_SUCCEEDED: return "succeeded";
    case v1::JOB_STATE_FAILED: return "failed";
    case v1::JOB_STATE_STOPPED: return "stopped";
    case v1::JOB_STATE_LOST: return "lost";
    case v1::JOB_STATE_KILLED_BY_GUARD: return "killed_by_guard";
    case v1::JOB_STATE_ORPHANED: return "orphaned";
    case v1::JOB_STATE_UNREADABLE: return "unreadable";
    case v1::JOB_STATE_QUEUED: return "queued";
    default: return "unknown";
  }
}

std::string SignalName(int signal_number) {
  // Numbers as on Linux x86-64 and arm64, where the agent runs; the client may
  // run elsewhere, so not strsignal().
  switch (signal_number) {
    case 1: return "SIGHUP";
    case 2: return "SIGINT";
    case 3: return "SIGQUIT";
    case 4: return "SIGILL";
    case 6: return "SIGABRT";
    case 7: return "SIGBUS";
    case 8: return "SIGFPE";
    case 9: return "SIGKILL";
    case 10: return "SIGUSR1";
    case 11: return "SIGSEGV";
    case 12: return "SIGUSR2";
    case 13: return "SIGPIPE";
    case 14: return "SIGALRM";
    case 15: return "SIGTERM";
    case 24: return "SIGXCPU";
    default: return "signal " + std::to_string(signal_number);
  }
}

std::string JobStateSummary(const v1::Job& job) {
  std::string out = JobStateName(job.state());
  if (job.state() == v1::JOB_STATE_QUEUED) return out + " #" + std::to_string(job.queue_position());
  if (job.progress().hung_since_unix_ms() > 0 && job.ended_unix_ms() <= 0) return out + " (hung)";
  if (job.has_term_signal()) return out + " (" + SignalName(job.term_signal()) + ")";
  if (job.has_exit_code()) return out + " (exit " + std::to_string(job.exit_code()) + ")";
  return out;
}

std::chrono::milliseconds JobRuntime(const v1::Job& job, int64_t now_unix_ms) {
  if (job.started_unix_ms() <= 0) return std::chrono::milliseconds(0);
  int64_t end = job.ended_unix_ms() > 0 ? job.ended_unix_ms() : now_unix_ms;
  return std::chrono::milliseconds(end > job.started_unix_ms() ? end - job.started_unix_ms() : 0);
}

OnOom JobOnOom(const v1::JobSpec& spec) {
  if (spec.on_oom_policy() == v1::ON_OOM_RECOVER) return OnOom::kRecover;
  if (spec.on_oom_policy() == v1::ON_OOM_UNSPECIFIED && spec.on_oom() == "recover") return OnOom::kRecover;
  return OnOom::kFail;
}

}  // namespace gpuctl::client
