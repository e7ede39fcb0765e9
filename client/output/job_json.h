// The JSON form of training jobs: a documented contract for scripts. Names
// are only ever added, never renamed or removed.
//
// A job: name, state (starting|running|succeeded|failed|stopped|lost|
// killed_by_guard), state_reason, exit_code (null: none), term_signal (null:
// none), pid, pgid, tmux_session, anchors (null: not set), anchors_flag,
// alloc_conf, gpus, container, script, cwd, command (array), created_unix_ms,
// started_unix_ms, ended_unix_ms (null while it runs), runtime_seconds,
// restart_count, log_bytes, log_path, metrics {step, loss, throughput
// {value, unit}, best_throughput {value, unit}} (each null when unknown),
// events [...].
//
// An event: kind, offset, message, time_unix_ms, and only those of rank,
// exception_type, gpu, tried_bytes, total_bytes, free_bytes, in_use_bytes,
// allocated_bytes, reserved_unallocated_bytes, allowed_bytes,
// other_processes [{pid, bytes}], traceback_offset, nccl_code, signal_number,
// signal_name, pid that the event carries.
#pragma once

#include <cstdint>

#include <nlohmann/json.hpp>

#include "gpuctl/v1/jobs.pb.h"

namespace gpuctl::client {

// `now_unix_ms` measures runtime_seconds of a job that still runs.
nlohmann::json JobToJson(const v1::Job& job, int64_t now_unix_ms);
nlohmann::json JobEventToJson(const v1::JobEvent& event);
// {"jobs": [...]}
nlohmann::json JobListToJson(const v1::ListJobsResponse& list, int64_t now_unix_ms);

}  // namespace gpuctl::client
