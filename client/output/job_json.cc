#include "client/output/job_json.h"

#include "client/output/job_state.h"

namespace gpuctl::client {
namespace {

using nlohmann::json;

json ThroughputJson(bool has, const v1::Throughput& t) {
  if (!has) return nullptr;
  return {{"value", t.value()}, {"unit", t.unit()}};
}

json MetricsJson(const v1::JobMetrics& m) {
  return {
      {"step", m.has_step() ? json(m.step()) : json(nullptr)},
      {"loss", m.has_loss() ? json(m.loss()) : json(nullptr)},
      {"throughput", ThroughputJson(m.has_throughput(), m.throughput())},
      {"best_throughput", ThroughputJson(m.has_best_throughput(), m.best_throughput())},
      {"grad_norm", m.has_grad_norm() ? json(m.grad_norm()) : json(nullptr)},
      {"learning_rate", m.has_learning_rate() ? json(m.learning_rate()) : json(nullptr)},
  };
}

}  // namespace

json JobEventToJson(const v1::JobEvent& e) {
  json out = {
      {"kind", e.kind()},
      {"offset", e.offset()},
      {"message", e.message()},
      {"time_unix_ms", e.time_unix_ms()},
  };
  if (e.has_rank()) out["rank"] = e.rank();
  if (e.has_exception_type()) out["exception_type"] = e.exception_type();
  if (e.has_gpu()) out["gpu"] = e.gpu();
  if (e.has_tried_bytes()) out["tried_bytes"] = e.tried_bytes();
  if (e.has_total_bytes()) out["total_bytes"] = e.total_bytes();
  if (e.has_free_bytes()) out["free_bytes"] = e.free_bytes();
  if (e.has_in_use_bytes()) out["in_use_bytes"] = e.in_use_bytes();
  if (e.has_allocated_bytes()) out["allocated_bytes"] = e.allocated_bytes();
  if (e.has_reserved_unallocated_bytes()) out["reserved_unallocated_bytes"] = e.reserved_unallocated_bytes();
  if (e.has_allowed_bytes()) out["allowed_bytes"] = e.allowed_bytes();
  if (e.other_processes_size() > 0) {
    json processes = json::array();
    for (const v1::GpuProcessMemory& p : e.other_processes()) {
      processes.push_back({{"pid", p.pid()}, {"bytes", p.bytes()}});
    }
    out["other_processes"] = processes;
  }
  if (e.has_traceback_offset()) out["traceback_offset"] = e.traceback_offset();
  if (e.has_nccl_code()) out["nccl_code"] = e.nccl_code();
  if (e.has_signal_number()) out["signal_number"] = e.signal_number();
  if (e.has_signal_name()) out["signal_name"] = e.signal_name();
  if (e.has_pid()) out["pid"] = e.pid();
  return out;
}

namespace {

// A build's options and the live governor's figures (null: not a build).
json BuildJson(const v1::BuildOptions& options, const v1::BuildStatus& b) {
  return {{"mem_budget_bytes", options.has_mem_budget_bytes() ? json(options.mem_budget_bytes()) : json(nullptr)},
          {"cpus", options.cpus()},
          {"archs", json(std::vector<std::string>(options.archs().begin(), options.archs().end()))},
          {"budget_bytes", b.budget_bytes()},
          {"headroom_bytes", b.headroom_bytes()},
          {"running", b.running()},
          {"paused", b.paused()},
          {"pauses", b.pauses()},
          {"paused_seconds", b.paused_seconds()},
          {"compiles_done", b.compiles_done()},
          {"compiles_stopped", b.compiles_stopped()},
          {"in_use_bytes", b.in_use_bytes()},
          {"peak_bytes", b.peak_bytes()},
          {"oom_kills", b.oom_kills()},
          {"failure", b.failure()}};
}

}  // namespace

json JobToJson(const v1::Job& job, int64_t now_unix_ms) {
  const v1::JobSpec& spec = job.spec();
  json command = json::array();
  for (const std::string& arg : spec.command()) command.push_back(arg);
  json events = json::array();
  for (const v1::JobEvent& e : job.events()) events.push_back(JobEventToJson(e));
  // What the run really got (empty before it launched, or from an older agent).
  json run_env = json::object();
  for (const auto& [key, value] : job.run_env()) run_env[key] = value;
  // Seconds with millisecond precision.
  double runtime_seconds = static_cast<double>(JobRuntime(job, now_unix_ms).count()) / 1000.0;
  json attempts = json::array();
  for (const v1::JobAttempt& a : job.attempts()) {
    attempts.push_back({{"attempt", a.attempt()},
                        {"run_id", a.run_id()},
                        {"state", JobStateName(a.state())},
                        {"state_reason", a.state_reason()},
                        {"alloc_conf", a.alloc_conf()},
                        {"command", std::vector<std::string>(a.command().begin(), a.command().end())},
                        {"step", a.has_step() ? json(a.step()) : json(nullptr)},
                        {"best_throughput", ThroughputJson(a.has_best_throughput(), a.best_throughput())},
                        {"log_path", a.log_path()},
                        {"started_unix_ms", a.started_unix_ms()},
                        {"ended_unix_ms", a.ended_unix_ms()},
                        {"changes", std::vector<std::string>(a.changes().begin(), a.changes().end())},
                        {"resumed_from", a.resumed_from().empty() ? json(nullptr) : json(a.resumed_from())},
                        {"events", a.events()}});
  }
  json gpu_memory = json::array();
  for (const v1::JobGpuMemory& m : job.gpu_memory()) {
    gpu_memory.push_back({{"index", m.index()},
                          {"uuid", m.uuid()},
                          {"used_bytes", m.used_bytes()},
                          {"peak_bytes", m.peak_bytes()},
                          {"total_bytes", m.total_bytes()}});
  }
  json on_oom = {{"policy", OnOomName(JobOnOom(spec))},
                 {"retries", spec.oom_retries()},
                 {"knobs", std::vector<std::string>(spec.oom_knobs().begin(), spec.oom_knobs().end())},
                 {"retry_args", std::vector<std::string>(spec.retry_args().begin(), spec.retry_args().end())}};
  const v1::JobProgress& p = job.progress();
  json progress = {
      {"last_progress_unix_ms", p.last_progress_unix_ms() > 0 ? json(p.last_progress_unix_ms()) : json(nullptr)},
      {"last_progress", p.last_progress()},
      {"budget_ms", p.budget_ms()},
      {"budget_source", p.budget_source()},
      {"hung", p.hung_since_unix_ms() > 0},
      {"hung_since_unix_ms", p.hung_since_unix_ms() > 0 ? json(p.hung_since_unix_ms()) : json(nullptr)},
      {"dump_dir", p.dump_dir().empty() ? json(nullptr) : json(p.dump_dir())}};
  const char* on_hang = spec.on_hang() == v1::ON_HANG_FAIL      ? "fail"
                        : spec.on_hang() == v1::ON_HANG_RECOVER ? "recover"
                                                                : "dump";
  json hang = {{"policy", on_hang},
               {"after_ms", spec.has_hang_after_ms() ? json(spec.hang_after_ms()) : json(nullptr)},
               {"start_timeout_ms", spec.has_start_timeout_ms() ? json(spec.start_timeout_ms()) : json(nullptr)}};
  json checkpoint = {
      {"dir", spec.checkpoint_dir()},
      {"resume_arg", spec.resume_arg()},
      {"complete_marker", spec.checkpoint_complete()},
      {"max_restarts_without_progress",
       spec.has_max_restarts_without_progress() ? json(spec.max_restarts_without_progress()) : json(nullptr)},
      {"resume_from", spec.resume_from().empty() ? json(nullptr) : json(spec.resume_from())}};
  return {
      {"name", spec.name()},
      {"run_id", job.run_id()},
      {"state", JobStateName(job.state())},
      {"state_reason", job.state_reason()},
      {"exit_code", job.has_exit_code() ? json(job.exit_code()) : json(nullptr)},
      {"term_signal", job.has_term_signal() ? json(job.term_signal()) : json(nullptr)},
      {"pid", job.pid()},
      {"pgid", job.pgid()},
      {"tmux_session", job.tmux_session()},
      {"tmux_socket", job.tmux_socket()},
      {"relaunch_pending", job.relaunch_pending()},
      {"anchors", spec.has_anchors() ? json(spec.anchors()) : json(nullptr)},
      {"anchors_flag", spec.anchors_flag()},
      {"alloc_conf", spec.alloc_conf()},
      {"gpus", spec.gpus()},
      {"container", spec.container()},
      {"script", spec.script()},
      {"cwd", spec.cwd()},
      {"command", command},
      {"run_command", std::vector<std::string>(job.run_command().begin(), job.run_command().end())},
      {"run_env", run_env},
      {"log_tail", std::vector<std::string>(job.log_tail().begin(), job.log_tail().end())},
      {"created_unix_ms", job.created_unix_ms()},
      {"started_unix_ms", job.started_unix_ms()},
      {"ended_unix_ms", job.ended_unix_ms() > 0 ? json(job.ended_unix_ms()) : json(nullptr)},
      {"runtime_seconds", runtime_seconds},
      {"restart_count", job.restart_count()},
      {"log_bytes", job.log_bytes()},
      {"parsed_bytes", job.parsed_bytes()},
      {"log_path", job.log_path()},
      {"metrics", MetricsJson(job.metrics())},
      {"events", events},
      {"events_dropped", job.events_dropped()},
      {"events_total", job.events_total()},
      {"attempt", spec.attempt()},
      {"on_oom", on_oom},
      {"attempts", attempts},
      {"gpu_memory", gpu_memory},
      {"num_gpus", spec.num_gpus()},
      {"gpu_mem_bytes", spec.has_gpu_mem_bytes() ? json(spec.gpu_mem_bytes()) : json(nullptr)},
      {"priority", spec.priority()},
      {"queue_position", job.state() == v1::JOB_STATE_QUEUED ? json(job.queue_position()) : json(nullptr)},
      {"waiting_for", job.waiting_for()},
      {"kind", spec.kind().empty() ? "train" : spec.kind()},
      {"build", spec.kind() == "build" ? BuildJson(spec.build(), job.build()) : json(nullptr)},
      {"on_hang", hang},
      {"on_fail", spec.on_fail() == v1::ON_FAIL_RECOVER ? "recover" : "fail"},
      {"on_gpu_fault", spec.on_gpu_fault() == v1::ON_FAIL_RECOVER ? "recover" : "fail"},
      {"checkpoint", checkpoint},
      {"progress", progress},
      {"restarts_without_progress", job.restarts_without_progress()},
  };
}

json JobListToJson(const v1::ListJobsResponse& list, int64_t now_unix_ms) {
  json jobs = json::array();
  for (const v1::Job& job : list.jobs()) jobs.push_back(JobToJson(job, now_unix_ms));
  return {{"jobs", jobs}};
}

}  // namespace gpuctl::client
