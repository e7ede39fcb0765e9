// Words for a job's state and how it ended, shared by the JSON and text forms.
#pragma once

#include <chrono>
#include <cstdint>
#include <string>

#include "common/job_rules.h"
#include "gpuctl/v1/jobs.pb.h"

namespace gpuctl::client {

// "starting", "running", "succeeded", "failed", "stopped", "lost",
// "killed_by_guard"; "unknown" for a state this client does not know.
const char* JobStateName(v1::JobState state);

// The job's --on-oom: the typed field, or from an older agent the string;
// "fail" when neither says.
OnOom JobOnOom(const v1::JobSpec& spec);

// "SIGTERM" for the signals a job usually dies of, else "signal 42".
std::string SignalName(int signal_number);

// The state and how the job ended: "running", "failed (exit 1)",
// "stopped (SIGTERM)".
std::string JobStateSummary(const v1::Job& job);

// From start to end, or to `now_unix_ms` while it runs; 0 before it started.
std::chrono::milliseconds JobRuntime(const v1::Job& job, int64_t now_unix_ms);

}  // namespace gpuctl::client
