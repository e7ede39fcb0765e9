// The kinds of event the agent publishes (AgentEvent::kind, v1::JobEvent's
// kind on the wire, LogEvent::kind for what a job's log shows). One spelling
// each, shared by the agent that publishes them and the client that reads
// them: these strings are a contract (scripts filter `gpuctl events -o json`
// on them), so a value never changes.
//
// Character arrays, not string_views: each converts to std::string (event
// records, JSON) and compares with one without a cast.
#pragma once

namespace gpuctl::event_kind {

// A job's life (agents/train).
inline constexpr char kJobStarted[] = "job_started";
inline constexpr char kJobEnded[] = "job_ended";
inline constexpr char kJobQueued[] = "job_queued";
inline constexpr char kJobOrphaned[] = "job_orphaned";
inline constexpr char kGpuMemoryHigh[] = "gpu_memory_high";

// OOM remediation (agents/train/oom_relaunch).
inline constexpr char kOomRemediation[] = "oom_remediation";
inline constexpr char kOomRemediationHeld[] = "oom_remediation_held";
inline constexpr char kOomGaveUp[] = "oom_gave_up";

// Runs that stop making progress, and relaunches from checkpoints
// (agents/train/hang_watch, checkpoint_relaunch).
inline constexpr char kJobHung[] = "job_hung";
inline constexpr char kJobRelaunched[] = "job_relaunched";
inline constexpr char kJobGaveUp[] = "job_gave_up";

// Failing GPUs (agents/health/gpu_fault_watch): a fault, drained or not,
// and drains and undrains by hand.
inline constexpr char kGpuFault[] = "gpu_fault";
inline constexpr char kGpuDrained[] = "gpu_drained";
inline constexpr char kGpuUndrained[] = "gpu_undrained";

// Recognised in a job's log (agents/train/log_events).
inline constexpr char kCudaOom[] = "cuda_oom";
inline constexpr char kAllocConfInvalid[] = "alloc_conf_invalid";
inline constexpr char kNcclError[] = "nccl_error";
inline constexpr char kTraceback[] = "traceback";
inline constexpr char kSignal[] = "signal";

// The memory guard (agents/guard).
inline constexpr char kGuardKill[] = "guard_kill";
inline constexpr char kGuardWarning[] = "guard_warning";
inline constexpr char kGuardNoVictim[] = "guard_no_victim";

// Guarded builds (agents/build).
inline constexpr char kBuildThrottled[] = "build_throttled";
inline constexpr char kBuildFailed[] = "build_failed";
inline constexpr char kBuildSummary[] = "build_summary";
// A build's command exited while processes it started still ran: they are killed.
inline constexpr char kBuildLeftRunning[] = "build_left_running";

// The event log itself: a reader that fell a ring behind (agents/events).
inline constexpr char kEventsDropped[] = "events_dropped";

// Every kind above, in the order above: `gpuctl events --kind` refuses a
// word not among them (a typo such as "oom" would otherwise match nothing,
// and read as "no OOMs"). A new kind goes here too.
inline constexpr const char* kAllKinds[] = {
    kJobStarted,     kJobEnded,          kJobQueued,     kJobOrphaned,     kGpuMemoryHigh,
    kOomRemediation, kOomRemediationHeld, kOomGaveUp,    kJobHung,         kJobRelaunched,
    kJobGaveUp,      kGpuFault,          kGpuDrained,    kGpuUndrained,    kCudaOom,
    kAllocConfInvalid, kNcclError,       kTraceback,     kSignal,          kGuardKill,
    kGuardWarning,   kGuardNoVictim,     kBuildThrottled, kBuildFailed,    kBuildSummary,
    kBuildLeftRunning, kEventsDropped,
};

}  // namespace gpuctl::event_kind
