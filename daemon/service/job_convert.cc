#include "daemon/service/job_convert.h"

#include <algorithm>
#include <sstream>

#include "agents/sys/tmux.h"
#include "common/job_rules.h"
#include "daemon/service/proto_text.h"

namespace gpuctl::daemon {
namespace {

v1::JobState ToProto(train::JobState s) {
  switch (s) {
    case train::JobState::kStarting: return v1::JOB_STATE_STARTING;
    case train::JobState::kRunning: return v1::JOB_STATE_RUNNING;
    case train::JobState::kSucceeded: return v1::JOB_STATE_SUCCEEDED;
    case train::JobState::kFailed: return v1::JOB_STATE_FAILED;
    case train::JobState::kStopped: return v1::JOB_STATE_STOPPED;
    case train::JobState::kLost: return v1::JOB_STATE_LOST;
    case train::JobState::kKilledByGuard: return v1::JOB_STATE_KILLED_BY_GUARD;
    case train::JobState::kOrphaned: return v1::JOB_STATE_ORPHANED;
    case train::JobState::kUnreadable: return v1::JOB_STATE_UNREADABLE;
    case train::JobState::kQueued: return v1::JOB_STATE_QUEUED;
  }
  return v1::JOB_STATE_UNSPECIFIED;
}

void ToProto(const train::JobSpec& in, v1::JobSpec& out) {
  out.set_name(in.name);
  for (const std::string& a : in.command) out.add_command(a);
  out.set_script(in.script);
  if (in.anchors) out.set_anchors(*in.anchors);
  out.set_anchors_flag(in.anchors_flag);
  out.set_alloc_conf(in.alloc_conf);
  for (const auto& [k, v] : in.env) (*out.mutable_env())[k] = v;
  out.set_cwd(in.cwd);
  out.set_gpus(in.gpus);
  out.set_container(in.container);
  if (in.mem_limit_bytes) out.set_mem_limit_bytes(*in.mem_limit_bytes);
  const OnOom on_oom = in.oom.recover ? OnOom::kRecover : OnOom::kFail;
  out.set_on_oom(OnOomName(on_oom));  // for older clients
  out.set_on_oom_policy(on_oom == OnOom::kRecover ? v1::ON_OOM_RECOVER : v1::ON_OOM_FAIL);
  out.set_oom_retries(in.oom.retries);
  for (const train::OomKnob& k : in.oom.knobs) {
    std::ostringstream factor;
    factor << k.factor;
    out.add_oom_knobs(k.flag + ":" + factor.str() + ":" + std::to_string(k.min));
  }
  for (const std::string& a : in.oom.retry_args) out.add_retry_args(a);
  out.set_attempt(in.attempt);
  out.set_num_gpus(in.num_gpus);
  if (in.gpu_mem_bytes) out.set_gpu_mem_bytes(*in.gpu_mem_bytes);
  out.set_priority(in.priority);
  out.set_kind(in.kind);
  if (in.kind == train::kJobKindBuild) {
    v1::BuildOptions& build = *out.mutable_build();
    if (in.build.mem_budget_bytes) build.set_mem_budget_bytes(*in.build.mem_budget_bytes);
    build.set_cpus(in.build.cpus);
    for (const std::string& arch : in.build.archs) build.add_archs(arch);
  }
  switch (in.hang.policy) {
    case OnHang::kDump: out.set_on_hang(v1::ON_HANG_DUMP); break;
    case OnHang::kFail: out.set_on_hang(v1::ON_HANG_FAIL); break;
    case OnHang::kRecover: out.set_on_hang(v1::ON_HANG_RECOVER); break;
  }
  if (in.hang.after_ms) out.set_hang_after_ms(static_cast<uint64_t>(*in.hang.after_ms));
  out.set_start_timeout_ms(static_cast<uint64_t>(in.hang.start_timeout_ms));
  out.set_checkpoint_dir(in.checkpoint.dir);
  out.set_resume_arg(in.checkpoint.resume_arg);
  out.set_checkpoint_complete(in.checkpoint.complete_marker);
  out.set_max_restarts_without_progress(in.checkpoint.max_restarts_without_progress);
  out.set_on_fail(in.on_fail == OnFail::kRecover ? v1::ON_FAIL_RECOVER : v1::ON_FAIL_FAIL);
  out.set_on_gpu_fault(in.on_gpu_fault == OnFail::kRecover ? v1::ON_FAIL_RECOVER : v1::ON_FAIL_FAIL);
  out.set_resume_from(in.resume_from);
}

// A duration in ms from the wire, kept within what the agent's clock adds
// without overflow (a year).
int64_t DurationFromWire(uint64_t ms) {
  constexpr uint64_t kYearMs = uint64_t{366} * 24 * 3600 * 1000;
  return static_cast<int64_t>(std::min(ms, kYearMs));
}

void ToProto(const train::Throughput& in, v1::Throughput& out) {
  out.set_value(in.value);
  out.set_unit(in.unit);
}

void ToProto(const train::JobEventRecord& in, v1::JobEvent& out) {
  const train::LogEvent& e = in.event;
  out.set_kind(e.kind);
  out.set_offset(e.offset);
  out.set_message(e.message);
  out.set_time_unix_ms(in.time_unix_ms);
  if (e.rank) out.set_rank(*e.rank);
  if (e.exception_type) out.set_exception_type(*e.exception_type);
  if (e.gpu) out.set_gpu(*e.gpu);
  if (e.tried_bytes) out.set_tried_bytes(*e.tried_bytes);
  if (e.total_bytes) out.set_total_bytes(*e.total_bytes);
  if (e.free_bytes) out.set_free_bytes(*e.free_bytes);
  if (e.in_use_bytes) out.set_in_use_bytes(*e.in_use_bytes);
  if (e.allocated_bytes) out.set_allocated_bytes(*e.allocated_bytes);
  if (e.reserved_unallocated_bytes) out.set_reserved_unallocated_bytes(*e.reserved_unallocated_bytes);
  if (e.allowed_bytes) out.set_allowed_bytes(*e.allowed_bytes);
  for (const train::GpuProcessMemory& p : e.other_processes) {
    v1::GpuProcessMemory* m = out.add_other_processes();
    m->set_pid(p.pid);
    m->set_bytes(p.bytes);
  }
  if (e.traceback_offset) out.set_traceback_offset(*e.traceback_offset);
  if (e.nccl_code) out.set_nccl_code(*e.nccl_code);
  if (e.signal_number) out.set_signal_number(*e.signal_number);
  if (e.signal_name) out.set_signal_name(*e.signal_name);
  if (e.pid) out.set_pid(*e.pid);
}

}  // namespace

Result<train::JobSpec> FromProto(const v1::JobSpec& in) {
  train::JobSpec out;
  out.name = in.name();
  out.command.assign(in.command().begin(), in.command().end());
  out.script = in.script();
  if (in.has_anchors()) out.anchors = in.anchors();
  if (!in.anchors_flag().empty()) out.anchors_flag = in.anchors_flag();
  out.alloc_conf = in.alloc_conf();
  for (const auto& [k, v] : in.env()) out.env[k] = v;
  out.cwd = in.cwd();
  out.gpus = in.gpus();
  out.container = in.container();
  if (in.has_mem_limit_bytes()) out.mem_limit_bytes = in.mem_limit_bytes();
  if (in.on_oom_policy() == v1::ON_OOM_RECOVER) {
    out.oom.recover = true;
  } else if (in.on_oom_policy() == v1::ON_OOM_UNSPECIFIED) {  // an older client: the string
    Result<OnOom> on_oom = ParseOnOom(in.on_oom());
    if (!on_oom.ok()) return on_oom.status();
    out.oom.recover = *on_oom == OnOom::kRecover;
  } else if (in.on_oom_policy() != v1::ON_OOM_FAIL) {
    return InvalidArgument("on_oom_policy " + std::to_string(static_cast<int>(in.on_oom_policy())) +
                           " is not known to this agent: use fail or recover");
  }
  if (in.has_oom_retries()) out.oom.retries = in.oom_retries();
  for (const std::string& text : in.oom_knobs()) {
    Result<train::OomKnob> knob = train::ParseOomKnob(text);
    if (!knob.ok()) return knob.status();
    out.oom.knobs.push_back(*knob);
  }
  out.oom.retry_args.assign(in.retry_args().begin(), in.retry_args().end());
  out.num_gpus = in.num_gpus();
  if (in.has_gpu_mem_bytes()) out.gpu_mem_bytes = in.gpu_mem_bytes();
  out.priority = in.priority();
  if (in.kind() == train::kJobKindBuild) {
    out.kind = std::string(train::kJobKindBuild);
    if (in.build().has_mem_budget_bytes()) out.build.mem_budget_bytes = in.build().mem_budget_bytes();
    out.build.cpus = in.build().cpus();
    out.build.archs.assign(in.build().archs().begin(), in.build().archs().end());
  } else if (!in.kind().empty() && in.kind() != train::kJobKindTrain) {
    return InvalidArgument("job kind must be train or build, got '" + in.kind() + "'");
  }
  switch (in.on_hang()) {
    case v1::ON_HANG_UNSPECIFIED:
    case v1::ON_HANG_DUMP: out.hang.policy = OnHang::kDump; break;
    case v1::ON_HANG_FAIL: out.hang.policy = OnHang::kFail; break;
    case v1::ON_HANG_RECOVER: out.hang.policy = OnHang::kRecover; break;
    default:
      return InvalidArgument("on_hang " + std::to_string(static_cast<int>(in.on_hang())) +
                             " is not known to this agent: use dump, fail or recover");
  }
  if (in.has_hang_after_ms()) out.hang.after_ms = DurationFromWire(in.hang_after_ms());
  if (in.has_start_timeout_ms()) out.hang.start_timeout_ms = DurationFromWire(in.start_timeout_ms());
  out.checkpoint.dir = in.checkpoint_dir();
  out.checkpoint.resume_arg = in.resume_arg();
  out.checkpoint.complete_marker = in.checkpoint_complete();
  // A start may ask to resume from a checkpoint under its directory (a
  // multi-node part relaunched with the rank that hung); ValidateJobSpec
  // holds it to that directory.
  out.resume_from = in.resume_from();
  if (in.has_max_restarts_without_progress()) {
    out.checkpoint.max_restarts_without_progress = in.max_restarts_without_progress();
  }
  switch (in.on_fail()) {
    case v1::ON_FAIL_UNSPECIFIED:
    case v1::ON_FAIL_FAIL: out.on_fail = OnFail::kFail; break;
    case v1::ON_FAIL_RECOVER: out.on_fail = OnFail::kRecover; break;
    default:
      return InvalidArgument("on_fail " + std::to_string(static_cast<int>(in.on_fail())) +
                             " is not known to this agent: use fail or recover");
  }
  switch (in.on_gpu_fault()) {
    case v1::ON_FAIL_UNSPECIFIED:
    case v1::ON_FAIL_FAIL: out.on_gpu_fault = OnFail::kFail; break;
    case v1::ON_FAIL_RECOVER: out.on_gpu_fault = OnFail::kRecover; break;
    default:
      return InvalidArgument("on_gpu_fault " + std::to_string(static_cast<int>(in.on_gpu_fault())) +
                             " is not known to this agent: use fail or recover");
  }
  return out;  // attempt: the agent's to set, 1 for a start
}

void ToProto(const train::JobRecord& in, v1::Job& out) {
  out.Clear();
  ToProto(in.spec, *out.mutable_spec());
  out.set_state(ToProto(in.state));
  out.set_state_reason(in.state_reason);
  if (in.exit_code) out.set_exit_code(*in.exit_code);
  if (in.term_signal) out.set_term_signal(*in.term_signal);
  // The job's own command once its wrapper has started it (in a session of
  // its own): what a user signals, or kills to simulate a crash, is the job,
  // not the shell around it. Before that, and for jobs started by an older
  // agent, the wrapper and its group.
  out.set_pid(in.inner_pid > 0 ? in.inner_pid : in.pid);
  out.set_pgid(in.inner_pgid > 0 ? in.inner_pgid : in.pgid);
  // The name tmux itself uses (a job "a.b" runs in session "gpuctl-a+b"), so
  // that `tmux attach -t` with it works.
  out.set_tmux_session(sys::TmuxNativeSessionName(in.tmux_session));
  out.set_created_unix_ms(in.created_unix_ms);
  out.set_started_unix_ms(in.started_unix_ms);
  out.set_ended_unix_ms(in.ended_unix_ms);
  out.set_restart_count(in.restart_count);
  out.set_log_bytes(in.log_bytes);
  out.set_parsed_bytes(in.parsed_offset);
  out.set_log_path(in.log_path);
  out.set_run_id(in.run_id);
  v1::JobMetrics* m = out.mutable_metrics();
  if (in.metrics.step) m->set_step(*in.metrics.step);
  if (in.metrics.loss) m->set_loss(*in.metrics.loss);
  if (in.metrics.grad_norm) m->set_grad_norm(*in.metrics.grad_norm);
  if (in.metrics.learning_rate) m->set_learning_rate(*in.metrics.learning_rate);
  if (in.metrics.throughput) ToProto(*in.metrics.throughput, *m->mutable_throughput());
  if (in.metrics.best_throughput) ToProto(*in.metrics.best_throughput, *m->mutable_best_throughput());
  for (const train::JobEventRecord& e : in.events) ToProto(e, *out.add_events());
  out.set_events_dropped(in.events_dropped);
  // Every attempt's events, this run's kept and dropped among them: a
  // relaunch starts its own list, and the count must not start over with it.
  uint64_t events_total = in.events.size() + in.events_dropped;
  for (const train::AttemptRecord& a : in.attempts) {
    v1::JobAttempt* p = out.add_attempts();
    p->set_attempt(a.attempt);
    p->set_run_id(a.run_id);
    p->set_alloc_conf(a.alloc_conf);
    for (const std::string& arg : a.command) p->add_command(arg);
    p->set_state(ToProto(a.state));
    p->set_state_reason(a.state_reason);
    if (a.step) p->set_step(*a.step);
    if (a.best_throughput) ToProto(*a.best_throughput, *p->mutable_best_throughput());
    p->set_log_path(a.log_path);
    p->set_started_unix_ms(a.started_unix_ms);
    p->set_ended_unix_ms(a.ended_unix_ms);
    for (const std::string& c : a.changes) p->add_changes(c);
    p->set_resumed_from(a.resumed_from);
    p->set_events(a.events);
    events_total += a.events;
  }
  out.set_events_total(events_total);
  for (const std::string& arg : in.run_command) out.add_run_command(arg);
  for (const auto& [key, value] : in.run_env) (*out.mutable_run_env())[key] = value;
  for (const std::string& line : in.log_tail) out.add_log_tail(line);
  v1::JobProgress* progress = out.mutable_progress();
  progress->set_last_progress_unix_ms(in.progress.last_progress_unix_ms);
  progress->set_last_progress(in.progress.last_progress);
  progress->set_budget_ms(in.progress.budget_ms);
  progress->set_budget_source(in.progress.budget_source);
  progress->set_hung_since_unix_ms(in.progress.hung_since_unix_ms);
  progress->set_dump_dir(in.progress.dump_dir);
  out.set_restarts_without_progress(in.restarts_without_progress);
  for (const train::JobGpuMemory& gpu : in.gpu_memory) {
    v1::JobGpuMemory* p = out.add_gpu_memory();
    p->set_index(gpu.index);
    p->set_uuid(gpu.uuid);
    p->set_used_bytes(gpu.used_bytes);
    p->set_peak_bytes(gpu.peak_bytes);
    p->set_total_bytes(gpu.total_bytes);
  }
  out.set_queue_position(in.queue_position);
  out.set_waiting_for(in.waiting_for);
  MakeStringsUtf8(out);
}

}  // namespace gpuctl::daemon
