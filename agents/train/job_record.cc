#include "agents/train/job_record.h"

#include <cmath>
#include <type_traits>

#include "common/json_integer.h"

namespace gpuctl::train {
namespace {

using nlohmann::json;

constexpr struct {
  JobState state;
  const char* name;
} kStateNames[] = {
    {JobState::kStarting, "starting"}, {JobState::kRunning, "running"},  {JobState::kSucceeded, "succeeded"},
    {JobState::kFailed, "failed"},     {JobState::kStopped, "stopped"},  {JobState::kLost, "lost"},
    {JobState::kKilledByGuard, "killed_by_guard"}, {JobState::kOrphaned, "orphaned"},
    {JobState::kUnreadable, "unreadable"}, {JobState::kQueued, "queued"},
};

template <typename T>
void PutOptional(json& j, const char* key, const std::optional<T>& value) {
  if (value) j[key] = *value;
}

template <typename T>
void GetOptional(const json& j, const char* key, std::optional<T>& out) {
  auto it = j.find(key);
  if (it == j.end() || it->is_null()) return;
  if constexpr (std::is_integral_v<T> && !std::is_same_v<T, bool>) {
    out = JsonInteger<T>(*it);  // get<T>() would convert 1e300: undefined behaviour
  } else {
    out = it->get<T>();
  }
}

// JSON has no NaN or inf; a diverged loss is worth keeping, so it is a string.
json Number(double v) { return std::isfinite(v) ? json(v) : json(std::to_string(v)); }
double NumberFrom(const json& j) { return j.is_string() ? std::stod(j.get<std::string>()) : j.get<double>(); }

json ToJson(const Throughput& t) { return {{"value", Number(t.value)}, {"unit", t.unit}}; }
Throughput ThroughputFromJson(const json& j) { return {NumberFrom(j.at("value")), j.at("unit").get<std::string>()}; }

json ToJson(const MetricsState& m) {
  json j = json::object();
  PutOptional(j, "step", m.step);
  if (m.loss) j["loss"] = Number(*m.loss);
  if (m.grad_norm) j["grad_norm"] = Number(*m.grad_norm);
  if (m.learning_rate) j["learning_rate"] = Number(*m.learning_rate);
  if (m.throughput) j["throughput"] = ToJson(*m.throughput);
  if (m.best_throughput) j["best_throughput"] = ToJson(*m.best_throughput);
  j["lines_seen"] = m.lines_seen;
  return j;
}

MetricsState MetricsFromJson(const json& j) {
  MetricsState m;
  GetOptional(j, "step", m.step);
  if (j.contains("loss")) m.loss = NumberFrom(j["loss"]);
  if (j.contains("grad_norm")) m.grad_norm = NumberFrom(j["grad_norm"]);
  if (j.contains("learning_rate")) m.learning_rate = NumberFrom(j["learning_rate"]);
  if (j.contains("throughput")) m.throughput = ThroughputFromJson(j["throughput"]);
  if (j.contains("best_throughput")) m.best_throughput = ThroughputFromJson(j["best_throughput"]);
  m.lines_seen = JsonIntegerOr(j, "lines_seen", uint64_t{0});
  return m;
}

json ToJson(const JobSpec& s) {
  json j = {{"name", s.name},   {"command", s.command}, {"script", s.script},   {"anchors_flag", s.anchors_flag},
            {"alloc_conf", s.alloc_conf}, {"env", s.env}, {"cwd", s.cwd}, {"gpus", s.gpus},
            {"container", s.container}};
  PutOptional(j, "anchors", s.anchors);
  PutOptional(j, "mem_limit_bytes", s.mem_limit_bytes);
  json knobs = json::array();
  for (const OomKnob& k : s.oom.knobs) knobs.push_back({{"flag", k.flag}, {"factor", Number(k.factor)}, {"min", k.min}});
  j["oom"] = {{"recover", s.oom.recover}, {"retries", s.oom.retries}, {"knobs", knobs},
              {"retry_args", s.oom.retry_args}};
  j["attempt"] = s.attempt;
  j["num_gpus"] = s.num_gpus;
  PutOptional(j, "gpu_mem_bytes", s.gpu_mem_bytes);
  j["priority"] = s.priority;
  j["kind"] = s.kind;
  j["hang"] = {{"policy", OnHangName(s.hang.policy)}, {"start_timeout_ms", s.hang.start_timeout_ms}};
  PutOptional(j["hang"], "after_ms", s.hang.after_ms);
  if (s.checkpoint != CheckpointOptions{}) {
    j["checkpoint"] = {{"dir", s.checkpoint.dir},
                       {"resume_arg", s.checkpoint.resume_arg},
                       {"complete_marker", s.checkpoint.complete_marker},
                       {"max_restarts_without_progress", s.checkpoint.max_restarts_without_progress}};
  }
  j["on_fail"] = OnFailName(s.on_fail);
  j["on_gpu_fault"] = OnFailName(s.on_gpu_fault);
  if (!s.resume_from.empty()) j["resume_from"] = s.resume_from;
  if (s.kind == kJobKindBuild) {
    j["build"] = {{"cpus", s.build.cpus}, {"archs", s.build.archs}};
    PutOptional(j["build"], "mem_budget_bytes", s.build.mem_budget_bytes);
  }
  return j;
}

JobSpec SpecFromJson(const json& j) {
  JobSpec s;
  s.name = j.at("name").get<std::string>();
  s.command = j.value("command", std::vector<std::string>{});
  s.script = j.value("script", "");
  GetOptional(j, "anchors", s.anchors);
  s.anchors_flag = j.value("anchors_flag", std::string(kDefaultAnchorsFlag));
  s.alloc_conf = j.value("alloc_conf", "");
  s.env = j.value("env", std::map<std::string, std::string>{});
  s.cwd = j.value("cwd", "");
  s.gpus = j.value("gpus", "");
  s.container = j.value("container", "");
  GetOptional(j, "mem_limit_bytes", s.mem_limit_bytes);
  if (j.contains("oom")) {
    const json& oom = j["oom"];
    s.oom.recover = oom.value("recover", false);
    s.oom.retries = JsonIntegerOr(oom, "retries", kDefaultOomRetries);
    for (const json& k : oom.value("knobs", json::array())) {
      s.oom.knobs.push_back({k.at("flag").get<std::string>(), NumberFrom(k.at("factor")),
                             JsonIntegerOr(k, "min", kDefaultOomKnobMin)});
    }
    s.oom.retry_args = oom.value("retry_args", std::vector<std::string>{});
  }
  s.attempt = JsonIntegerOr(j, "attempt", uint32_t{1});
  s.num_gpus = JsonIntegerOr(j, "num_gpus", uint32_t{0});
  GetOptional(j, "gpu_mem_bytes", s.gpu_mem_bytes);
  s.priority = JsonIntegerOr(j, "priority", int32_t{0});
  s.kind = j.value("kind", std::string(kJobKindTrain));
  if (j.contains("hang") && j["hang"].is_object()) {
    const json& hang = j["hang"];
    s.hang.policy = ParseOnHang(hang.value("policy", "")).value_or(OnHang::kDump);
    s.hang.start_timeout_ms = JsonIntegerOr(hang, "start_timeout_ms", kDefaultStartTimeoutMs);
    GetOptional(hang, "after_ms", s.hang.after_ms);
  }
  if (j.contains("checkpoint") && j["checkpoint"].is_object()) {
    const json& c = j["checkpoint"];
    s.checkpoint.dir = c.value("dir", "");
    s.checkpoint.resume_arg = c.value("resume_arg", "");
    s.checkpoint.complete_marker = c.value("complete_marker", "");
    s.checkpoint.max_restarts_without_progress =
        JsonIntegerOr(c, "max_restarts_without_progress", kDefaultMaxRestartsWithoutProgress);
  }
  s.on_fail = ParseOnFail(j.value("on_fail", "")).value_or(OnFail::kFail);
  s.on_gpu_fault = ParseOnFail(j.value("on_gpu_fault", "")).value_or(OnFail::kFail);
  s.resume_from = j.value("resume_from", "");
  if (j.contains("build") && j["build"].is_object()) {
    const json& build = j["build"];
    s.build.cpus = JsonIntegerOr(build, "cpus", uint32_t{0});
    s.build.archs = build.value("archs", std::vector<std::string>{});
    GetOptional(build, "mem_budget_bytes", s.build.mem_budget_bytes);
  }
  return s;
}

json ToJson(const AttemptRecord& a) {
  json j = {{"attempt", a.attempt},         {"run_id", a.run_id},
            {"alloc_conf", a.alloc_conf},   {"command", a.command},
            {"state", JobStateName(a.state)}, {"state_reason", a.state_reason},
            {"log_path", a.log_path},       {"started_unix_ms", a.started_unix_ms},
            {"ended_unix_ms", a.ended_unix_ms}, {"changes", a.changes}};
  if (!a.resumed_from.empty()) j["resumed_from"] = a.resumed_from;
  if (a.events > 0) j["events"] = a.events;
  PutOptional(j, "step", a.step);
  if (a.best_throughput) j["best_throughput"] = ToJson(*a.best_throughput);
  return j;
}

AttemptRecord AttemptFromJson(const json& j) {
  AttemptRecord a;
  a.attempt = JsonIntegerOr(j, "attempt", uint32_t{1});
  a.run_id = j.value("run_id", "");
  a.alloc_conf = j.value("alloc_conf", "");
  a.command = j.value("command", std::vector<std::string>{});
  a.state = ParseJobState(j.value("state", "failed")).value_or(JobState::kFailed);
  a.state_reason = j.value("state_reason", "");
  GetOptional(j, "step", a.step);
  if (j.contains("best_throughput")) a.best_throughput = ThroughputFromJson(j["best_throughput"]);
  a.log_path = j.value("log_path", "");
  a.started_unix_ms = JsonIntegerOr(j, "started_unix_ms", int64_t{0});
  a.ended_unix_ms = JsonIntegerOr(j, "ended_unix_ms", int64_t{0});
  a.changes = j.value("changes", std::vector<std::string>{});
  a.resumed_from = j.value("resumed_from", "");
  a.events = JsonIntegerOr(j, "events", uint64_t{0});
  return a;
}

json ToJson(const JobProgress& p) {
  json j = {{"last_progress_unix_ms", p.last_progress_unix_ms}, {"last_progress", p.last_progress},
            {"budget_ms", p.budget_ms}, {"budget_source", p.budget_source}};
  if (p.hung_since_unix_ms > 0) j["hung_since_unix_ms"] = p.hung_since_unix_ms;
  if (!p.dump_dir.empty()) j["dump_dir"] = p.dump_dir;
  return j;
}

JobProgress ProgressFromJson(const json& j) {
  JobProgress p;
  p.last_progress_unix_ms = JsonIntegerOr(j, "last_progress_unix_ms", int64_t{0});
  p.last_progress = j.value("last_progress", "");
  p.budget_ms = JsonIntegerOr(j, "budget_ms", int64_t{0});
  p.budget_source = j.value("budget_source", "");
  p.hung_since_unix_ms = JsonIntegerOr(j, "hung_since_unix_ms", int64_t{0});
  p.dump_dir = j.value("dump_dir", "");
  return p;
}

}  // namespace

const char* JobStateName(JobState state) {
  for (const auto& s : kStateNames) {
    if (s.state == state) return s.name;
  }
  return "unknown";
}

std::optional<JobState> ParseJobState(std::string_view name) {
  for (const auto& s : kStateNames) {
    if (name == s.name) return s.state;
  }
  return std::nullopt;
}

bool IsActive(JobState state) {
  return state == JobState::kStarting || state == JobState::kRunning || state == JobState::kOrphaned;
}

json ToJson(const LogEvent& e) {
  json j = {{"kind", e.kind}, {"offset", e.offset}, {"message", e.message}};
  PutOptional(j, "rank", e.rank);
  PutOptional(j, "exception_type", e.exception_type);
  PutOptional(j, "gpu", e.gpu);
  PutOptional(j, "tried_bytes", e.tried_bytes);
  PutOptional(j, "total_bytes", e.total_bytes);
  PutOptional(j, "free_bytes", e.free_bytes);
  PutOptional(j, "in_use_bytes", e.in_use_bytes);
  PutOptional(j, "allocated_bytes", e.allocated_bytes);
  PutOptional(j, "reserved_unallocated_bytes", e.reserved_unallocated_bytes);
  PutOptional(j, "allowed_bytes", e.allowed_bytes);
  if (!e.other_processes.empty()) {
    json others = json::array();
    for (const GpuProcessMemory& p : e.other_processes) others.push_back({{"pid", p.pid}, {"bytes", p.bytes}});
    j["other_processes"] = others;
  }
  PutOptional(j, "traceback_offset", e.traceback_offset);
  PutOptional(j, "nccl_code", e.nccl_code);
  PutOptional(j, "signal_number", e.signal_number);
  PutOptional(j, "signal_name", e.signal_name);
  PutOptional(j, "pid", e.pid);
  return j;
}

LogEvent LogEventFromJson(const json& j) {
  LogEvent e;
  e.kind = j.at("kind").get<std::string>();
  e.offset = JsonInteger<uint64_t>(j.at("offset"));
  e.message = j.value("message", "");
  GetOptional(j, "rank", e.rank);
  GetOptional(j, "exception_type", e.exception_type);
  GetOptional(j, "gpu", e.gpu);
  GetOptional(j, "tried_bytes", e.tried_bytes);
  GetOptional(j, "total_bytes", e.total_bytes);
  GetOptional(j, "free_bytes", e.free_bytes);
  GetOptional(j, "in_use_bytes", e.in_use_bytes);
  GetOptional(j, "allocated_bytes", e.allocated_bytes);
  GetOptional(j, "reserved_unallocated_bytes", e.reserved_unallocated_bytes);
  GetOptional(j, "allowed_bytes", e.allowed_bytes);
  if (j.contains("other_processes")) {
    for (const json& p : j["other_processes"]) {
      e.other_processes.push_back({JsonInteger<int64_t>(p.at("pid")), JsonInteger<uint64_t>(p.at("bytes"))});
    }
  }
  GetOptional(j, "traceback_offset", e.traceback_offset);
  GetOptional(j, "nccl_code", e.nccl_code);
  GetOptional(j, "signal_number", e.signal_number);
  GetOptional(j, "signal_name", e.signal_name);
  GetOptional(j, "pid", e.pid);
  return e;
}

json ToJson(const JobRecord& r) {
  json events = json::array();
  for (const JobEventRecord& e : r.events) {
    json j = ToJson(e.event);
    j["time_unix_ms"] = e.time_unix_ms;
    events.push_back(std::move(j));
  }
  json j = {{"spec", ToJson(r.spec)},
            {"run_id", r.run_id},
            {"state", JobStateName(r.state)},
            {"state_reason", r.state_reason},
            {"pid", r.pid},
            {"pgid", r.pgid},
            {"tmux_session", r.tmux_session},
            {"created_unix_ms", r.created_unix_ms},
            {"started_unix_ms", r.started_unix_ms},
            {"ended_unix_ms", r.ended_unix_ms},
            {"restart_count", r.restart_count},
            {"stop_requested", r.stop_requested},
            {"log_path", r.log_path},
            {"exit_path", r.exit_path},
            {"log_bytes", r.log_bytes},
            {"parsed_offset", r.parsed_offset},
            {"metrics", ToJson(r.metrics)},
            {"events", events}};
  if (r.events_dropped > 0) j["events_dropped"] = r.events_dropped;
  PutOptional(j, "exit_code", r.exit_code);
  PutOptional(j, "term_signal", r.term_signal);
  PutOptional(j, "pid_start_time", r.pid_start_time);
  PutOptional(j, "guard_kill_reason", r.guard_kill_reason);
  PutOptional(j, "stop_deadline_unix_ms", r.stop_deadline_unix_ms);
  if (!r.attempts.empty()) {
    json attempts = json::array();
    for (const AttemptRecord& a : r.attempts) attempts.push_back(ToJson(a));
    j["attempts"] = attempts;
  }
  if (r.oom_decided) j["oom_decided"] = true;
  if (!r.gpu_memory.empty()) {
    json memory = json::array();
    for (const JobGpuMemory& m : r.gpu_memory) memory.push_back(ToJson(m));
    j["gpu_memory"] = memory;
  }
  PutOptional(j, "hold_step", r.hold_step);
  if (r.progress != JobProgress{}) j["progress"] = ToJson(r.progress);
  if (!r.agent_stop_reason.empty()) j["agent_stop_reason"] = r.agent_stop_reason;
  if (!r.agent_stop_cause.empty()) j["agent_stop_cause"] = r.agent_stop_cause;
  if (r.relaunch_after_stop) j["relaunch_after_stop"] = true;
  if (r.relaunch_decided) j["relaunch_decided"] = true;
  if (r.restarts_without_progress > 0) j["restarts_without_progress"] = r.restarts_without_progress;
  if (r.state == JobState::kQueued) {
    j["queued_unix_ms"] = r.queued_unix_ms;
    j["waiting_for"] = r.waiting_for;
  }
  j["cgroup"] = r.cgroup;
  if (!r.cgroup_gate.empty()) j["cgroup_gate"] = r.cgroup_gate;
  if (!r.pid_path.empty()) {
    j["pid_path"] = r.pid_path;
    j["inner_pid"] = r.inner_pid;
    j["inner_pgid"] = r.inner_pgid;
    PutOptional(j, "inner_start_time", r.inner_start_time);
  }
  if (!r.run_command.empty()) j["run_command"] = r.run_command;
  if (!r.run_env.empty()) j["run_env"] = r.run_env;
  if (!r.log_tail.empty()) j["log_tail"] = r.log_tail;
  return j;
}

Result<JobRecord> JobRecordFromJson(const json& j) {
  try {
    JobRecord r;
    r.spec = SpecFromJson(j.at("spec"));
    if (Status s = ValidateJobName(r.spec.name); !s.ok()) return s.Wrap("job record");
    // Records from before run ids: one run, named as such.
    r.run_id = j.value("run_id", "legacy");
    if (r.run_id.find_first_not_of("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-") !=
                                std::string::npos) {
      return InvalidArgument("job record: malformed run_id");
    }
    std::optional<JobState> state = ParseJobState(j.at("state").get<std::string>());
    if (!state) return InvalidArgument("job record: unknown state '" + j.at("state").get<std::string>() + "'");
    r.state = *state;
    r.state_reason = j.value("state_reason", "");
    GetOptional(j, "exit_code", r.exit_code);
    GetOptional(j, "term_signal", r.term_signal);
    r.pid = JsonIntegerOr(j, "pid", int64_t{0});
    r.pgid = JsonIntegerOr(j, "pgid", int64_t{0});
    GetOptional(j, "pid_start_time", r.pid_start_time);
    r.tmux_session = j.value("tmux_session", "");
    r.created_unix_ms = JsonIntegerOr(j, "created_unix_ms", int64_t{0});
    r.started_unix_ms = JsonIntegerOr(j, "started_unix_ms", int64_t{0});
    r.ended_unix_ms = JsonIntegerOr(j, "ended_unix_ms", int64_t{0});
    r.restart_count = JsonIntegerOr(j, "restart_count", uint32_t{0});
    r.stop_requested = j.value("stop_requested", false);
    GetOptional(j, "stop_deadline_unix_ms", r.stop_deadline_unix_ms);
    GetOptional(j, "guard_kill_reason", r.guard_kill_reason);
    r.cgroup = j.value("cgroup", "");
    r.log_path = j.value("log_path", "");
    r.exit_path = j.value("exit_path", "");
    r.pid_path = j.value("pid_path", "");
    r.cgroup_gate = j.value("cgroup_gate", "");
    r.inner_pid = JsonIntegerOr(j, "inner_pid", int64_t{0});
    r.inner_pgid = JsonIntegerOr(j, "inner_pgid", int64_t{0});
    GetOptional(j, "inner_start_time", r.inner_start_time);
    for (const auto& [field, path] : {std::pair{"log_path", &r.log_path}, std::pair{"exit_path", &r.exit_path},
                                      std::pair{"pid_path", &r.pid_path}, std::pair{"cgroup", &r.cgroup},
                                      std::pair{"cgroup_gate", &r.cgroup_gate},
                                      std::pair{"spec.cwd", &r.spec.cwd}}) {
      if (!path->empty() && (path->front() != '/' || path->find("/../") != std::string::npos)) {
        return InvalidArgument(std::string("job record: ") + field + " '" + *path + "' is not an absolute path");
      }
    }
    if (r.state == JobState::kUnreadable) return InvalidArgument("job record: state 'unreadable' is never saved");
    r.log_bytes = JsonIntegerOr(j, "log_bytes", uint64_t{0});
    r.parsed_offset = JsonIntegerOr(j, "parsed_offset", uint64_t{0});
    if (j.contains("metrics")) r.metrics = MetricsFromJson(j["metrics"]);
    for (const json& e : j.value("events", json::array())) {
      r.events.push_back({LogEventFromJson(e), JsonIntegerOr(e, "time_unix_ms", int64_t{0})});
    }
    r.events_dropped = JsonIntegerOr(j, "events_dropped", uint64_t{0});
    for (const json& a : j.value("attempts", json::array())) r.attempts.push_back(AttemptFromJson(a));
    r.oom_decided = j.value("oom_decided", false);
    for (const json& m : j.value("gpu_memory", json::array())) r.gpu_memory.push_back(JobGpuMemoryFromJson(m));
    GetOptional(j, "hold_step", r.hold_step);
    if (j.contains("progress") && j["progress"].is_object()) r.progress = ProgressFromJson(j["progress"]);
    r.agent_stop_reason = j.value("agent_stop_reason", "");
    r.agent_stop_cause = j.value("agent_stop_cause", "");
    r.relaunch_after_stop = j.value("relaunch_after_stop", false);
    r.relaunch_decided = j.value("relaunch_decided", false);
    r.restarts_without_progress = JsonIntegerOr(j, "restarts_without_progress", uint32_t{0});
    r.queued_unix_ms = JsonIntegerOr(j, "queued_unix_ms", int64_t{0});
    r.waiting_for = j.value("waiting_for", "");
    r.run_command = j.value("run_command", std::vector<std::string>{});
    r.run_env = j.value("run_env", std::map<std::string, std::string>{});
    r.log_tail = j.value("log_tail", std::vector<std::string>{});
    return r;
  } catch (const std::exception& e) {
    return InvalidArgument(std::string("job record is malformed: ") + e.what());
  }
}

}  // namespace gpuctl::train
