// The fields of the job structs the agent saves (job.json) and receives
// (the wire's JobSpec), for the checks in every_field.h. A field added to one
// of these structs breaks the build here first: add it to the list, then to
// the round-trip tests (tests/unit/train/job_record_test.cc,
// tests/unit/daemon/job_convert_test.cc), which fail until it is set and
// carried.
#pragma once

#include "agents/train/job_gpu_memory.h"
#include "agents/train/job_record.h"
#include "agents/train/job_spec.h"
#include "agents/train/log_event.h"
#include "agents/train/metrics.h"
#include "agents/train/throughput.h"
#include "tests/fakes/every_field.h"

namespace gpuctl::testing {

GPUCTL_FIELDS(train::OomKnob, flag, factor, min);
GPUCTL_FIELDS(train::OomPolicy, recover, retries, knobs, retry_args);
GPUCTL_FIELDS(train::BuildOptions, mem_budget_bytes, cpus, archs);
GPUCTL_FIELDS(train::HangOptions, policy, after_ms, start_timeout_ms);
GPUCTL_FIELDS(train::CheckpointOptions, dir, resume_arg, complete_marker, max_restarts_without_progress);
GPUCTL_FIELDS(train::JobSpec, name, kind, build, command, script, anchors, anchors_flag, alloc_conf, env, cwd, gpus,
              container, mem_limit_bytes, oom, hang, checkpoint, on_fail, on_gpu_fault, resume_from, num_gpus, gpu_mem_bytes,
              priority, attempt);
GPUCTL_FIELDS(train::Throughput, value, unit);
GPUCTL_FIELDS(train::MetricsState, step, loss, grad_norm, learning_rate, throughput, best_throughput, lines_seen);
GPUCTL_FIELDS(train::GpuProcessMemory, pid, bytes);
GPUCTL_FIELDS(train::LogEvent, kind, offset, message, rank, exception_type, gpu, tried_bytes, total_bytes, free_bytes,
              in_use_bytes, allocated_bytes, reserved_unallocated_bytes, allowed_bytes, other_processes,
              traceback_offset, nccl_code, signal_number, signal_name, pid);
GPUCTL_FIELDS(train::JobEventRecord, event, time_unix_ms);
GPUCTL_FIELDS(train::AttemptRecord, attempt, run_id, alloc_conf, command, state, state_reason, step, best_throughput,
              log_path, started_unix_ms, ended_unix_ms, changes, resumed_from, events);
GPUCTL_FIELDS(train::JobProgress, last_progress_unix_ms, last_progress, budget_ms, budget_source, hung_since_unix_ms,
              dump_dir);
GPUCTL_FIELDS(train::JobGpuMemory, index, uuid, used_bytes, peak_bytes, total_bytes, high_reported);
GPUCTL_FIELDS(train::JobRecord, spec, run_id, state, state_reason, exit_code, term_signal, pid, pgid, pid_start_time,
              tmux_session, created_unix_ms, started_unix_ms, ended_unix_ms, restart_count, stop_requested,
              stop_deadline_unix_ms, guard_kill_reason, cgroup, log_path, exit_path, cgroup_gate, pid_path, inner_pid, inner_pgid,
              inner_start_time, log_bytes, parsed_offset, metrics, events, events_dropped, attempts, oom_decided,
              hold_step, progress, agent_stop_reason, agent_stop_cause, relaunch_after_stop, restarts_without_progress,
              relaunch_decided, gpu_memory, queued_unix_ms, queue_position, waiting_for, run_command, run_env,
              log_tail);

}  // namespace gpuctl::testing
