#include "client/output/job_text.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <vector>

#include "client/output/job_state.h"
#include "client/output/table.h"
#include "common/event_kinds.h"
#include "common/utf8.h"
#include "common/units.h"

namespace gpuctl::client {
namespace {

std::string Printf(const char* format, double v) {
  char buf[64];
  std::snprintf(buf, sizeof buf, format, v);
  return buf;
}

std::string Loss(double loss) { return Printf("%.6g", loss); }

// "5123 tok/s", "3.45 it/s", "0.123 s/it": enough digits, no more.
std::string Rate(const v1::Throughput& t) {
  // By magnitude: a rate the job printed negative keeps its sign and its form.
  const double size = std::fabs(t.value());
  const char* format = size >= 100 ? "%.0f" : size >= 1 ? "%.2f" : "%.3g";
  return Printf(format, t.value()) + " " + t.unit();
}

std::string OrDash(const std::string& s) { return s.empty() ? "-" : s; }

// The argv as a shell would need it typed: 'single quotes' where needed.
std::string QuotedCommand(const google::protobuf::RepeatedPtrField<std::string>& argv) {
  std::string out;
  for (const std::string& arg : argv) {
    bool plain = !arg.empty() && arg.find_first_not_of("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz"
                                                       "0123456789-_./=:,+@%") == std::string::npos;
    if (!out.empty()) out += ' ';
    if (plain) {
      out += arg;
      continue;
    }
    out += '\'';
    for (char c : arg) out += c == '\'' ? std::string("'\\''") : std::string(1, c);
    out += '\'';
  }
  return out;
}

// The first line of a message, at most 160 bytes, cut where a character
// starts (the line is escaped for the terminal after).
std::string FirstLineCut(const std::string& message) {
  std::string line = message.substr(0, message.find('\n'));
  if (line.size() > 160) {
    size_t cut = 157;
    while (cut > 0 && (static_cast<unsigned char>(line[cut]) & 0xC0) == 0x80) --cut;
    line = line.substr(0, cut) + "...";
  }
  return line;
}

std::vector<std::string> OomDetails(const v1::JobEvent& e) {
  std::vector<std::string> d;
  if (e.has_gpu()) d.push_back("gpu " + std::to_string(e.gpu()));
  if (e.has_tried_bytes()) d.push_back("tried " + FormatBytes(e.tried_bytes()));
  if (e.has_free_bytes() && e.has_total_bytes()) {
    d.push_back("free " + FormatBytes(e.free_bytes()) + " of " + FormatBytes(e.total_bytes()));
  } else if (e.has_free_bytes()) {
    d.push_back("free " + FormatBytes(e.free_bytes()));
  } else if (e.has_total_bytes()) {
    d.push_back("total " + FormatBytes(e.total_bytes()));
  }
  if (e.has_in_use_bytes()) d.push_back("this process " + FormatBytes(e.in_use_bytes()));
  if (e.has_allocated_bytes()) d.push_back("allocated " + FormatBytes(e.allocated_bytes()));
  if (e.has_reserved_unallocated_bytes()) {
    d.push_back("reserved unallocated " + FormatBytes(e.reserved_unallocated_bytes()));
  }
  if (e.has_allowed_bytes()) d.push_back("allowed " + FormatBytes(e.allowed_bytes()));
  for (const v1::GpuProcessMemory& p : e.other_processes()) {
    d.push_back("pid " + std::to_string(p.pid()) + " has " + FormatBytes(p.bytes()));
  }
  return d;
}

std::string EventsSummary(const v1::Job& job) {
  // Kinds in the order first seen, with a count when repeated: "cuda_oom(2),traceback".
  std::vector<std::pair<std::string, int>> kinds;
  for (const v1::JobEvent& e : job.events()) {
    auto it = std::find_if(kinds.begin(), kinds.end(), [&](const auto& k) { return k.first == e.kind(); });
    if (it == kinds.end()) kinds.emplace_back(e.kind(), 1);
    else ++it->second;
  }
  std::string out;
  for (const auto& [kind, count] : kinds) {
    if (!out.empty()) out += ',';
    out += kind + (count > 1 ? "(" + std::to_string(count) + ")" : "");
  }
  // After a relaunch this run may have none: the earlier attempts' are
  // counted, not hidden behind a "-".
  const uint64_t this_run = static_cast<uint64_t>(job.events_size()) + job.events_dropped();
  if (job.events_total() > this_run) {
    out += (out.empty() ? "" : " ") + std::string("+") + std::to_string(job.events_total() - this_run) + " earlier";
  }
  return OrDash(out);
}

}  // namespace

std::string JobEventToText(const v1::JobEvent& e) {
  std::vector<std::string> details;
  if (e.has_rank()) details.push_back("rank " + std::to_string(e.rank()));
  if (e.kind() == event_kind::kCudaOom) {
    for (std::string& d : OomDetails(e)) details.push_back(std::move(d));
  }
  if (e.has_signal_number()) {
    std::string name = e.has_signal_name() ? e.signal_name() : SignalName(e.signal_number());
    details.push_back("signal " + std::to_string(e.signal_number()) + " " + name);
  } else if (e.has_signal_name()) {
    details.push_back("signal " + e.signal_name());
  }
  if (e.has_pid()) details.push_back("pid " + std::to_string(e.pid()));
  if (e.has_nccl_code()) details.push_back(e.nccl_code());
  // An OOM's numbers say it all; other events need their words.
  bool with_message = e.kind() != event_kind::kCudaOom || details.empty();
  if (with_message && e.has_exception_type() && e.message().find(e.exception_type()) == std::string::npos) {
    details.push_back(e.exception_type());
  }
  std::string line = e.kind() + " at offset " + std::to_string(e.offset());
  std::string joined;
  for (const std::string& d : details) joined += (joined.empty() ? "" : ", ") + d;
  if (with_message && !e.message().empty()) joined += (joined.empty() ? "" : ": ") + FirstLineCut(e.message());
  // Kind, message, exception type, signal name and NCCL code all come from
  // the job's output.
  return EscapeForTerminal(joined.empty() ? line : line + ": " + joined);
}

namespace {

std::string JobKind(const v1::JobSpec& spec) { return spec.kind().empty() ? "train" : spec.kind(); }

// The live governor's figures for a build.
std::string BuildText(const v1::BuildStatus& b) {
  if (b.budget_bytes() == 0) return "not governed (no figures: the agent has no job cgroups, or restarted since)";
  std::string text = "budget " + FormatBytes(b.budget_bytes()) + ", in use " + FormatBytes(b.in_use_bytes()) +
                     ", peak " + FormatBytes(b.peak_bytes()) + "; compiles: " + std::to_string(b.running()) +
                     " running, " + std::to_string(b.paused()) + " paused, " + std::to_string(b.compiles_done()) +
                     " done" + (b.compiles_stopped() > 0 ? ", " + std::to_string(b.compiles_stopped()) + " stopped" : "") +
                     "; " + std::to_string(b.pauses()) + " pauses, " +
                     std::to_string(static_cast<uint64_t>(b.paused_seconds())) + " compile-s paused; " +
                     std::to_string(b.oom_kills()) + " OOM kills";
  if (!b.failure().empty()) text += "; failed: " + b.failure();
  return text;
}

// Hang detection's view, the policies, and where checkpoints are.
template <typename Field>
void ProgressText(const v1::Job& job, int64_t now_unix_ms, Field& field) {
  const v1::JobSpec& spec = job.spec();
  const v1::JobProgress& p = job.progress();
  if (p.last_progress_unix_ms() > 0 && job.ended_unix_ms() <= 0) {
    std::string line = p.last_progress() + ", " +
                       FormatDuration(std::chrono::milliseconds(std::max<int64_t>(now_unix_ms - p.last_progress_unix_ms(), 0))) +
                       " ago (hung after " + FormatDuration(std::chrono::milliseconds(p.budget_ms())) + ", " +
                       p.budget_source() + ")";
    field("progress", line);
  }
  if (p.hung_since_unix_ms() > 0) field("hung", "since " + FormatDuration(std::chrono::milliseconds(
                                                           std::max<int64_t>(now_unix_ms - p.hung_since_unix_ms(), 0))) +
                                                   " ago");
  if (!p.dump_dir().empty()) field("last dump", p.dump_dir());
  const bool hang_set = spec.on_hang() == v1::ON_HANG_FAIL || spec.on_hang() == v1::ON_HANG_RECOVER ||
                        spec.has_hang_after_ms();
  if (hang_set) {
    std::string policy = spec.on_hang() == v1::ON_HANG_FAIL      ? "fail"
                         : spec.on_hang() == v1::ON_HANG_RECOVER ? "recover"
                                                                 : "dump";
    if (spec.has_hang_after_ms()) policy += ", after " + FormatDuration(std::chrono::milliseconds(spec.hang_after_ms()));
    field("on hang", policy);
  }
  if (spec.on_fail() == v1::ON_FAIL_RECOVER) field("on fail", "recover");
  if (spec.on_gpu_fault() == v1::ON_FAIL_RECOVER) field("on gpu fault", "recover");
  if (!spec.checkpoint_dir().empty()) {
    field("checkpoints", spec.checkpoint_dir() + (spec.resume_arg().empty() ? "" : " (resume: " + spec.resume_arg() + ")"));
  }
  if (job.restarts_without_progress() > 0) {
    field("no progress", std::to_string(job.restarts_without_progress()) + " relaunch(es) in a row without a newer checkpoint");
  }
}

}  // namespace

std::string JobToText(const v1::Job& job, int64_t now_unix_ms) {
  const v1::JobSpec& spec = job.spec();
  const v1::JobMetrics& m = job.metrics();
  std::string out;
  // Values hold text from outside (a reason, a path, a command's words).
  auto field = [&](const std::string& label, const std::string& value) {
    out += label + ":" + std::string(label.size() < 11 ? 11 - label.size() : 1, ' ') + EscapeForTerminal(value) + "\n";
  };
  field("job", spec.name());
  field("kind", JobKind(spec));
  // The reason once: "running", not "running (running)".
  const std::string state_name = JobStateName(job.state());
  const bool reason_adds = !job.state_reason().empty() && job.state_reason() != state_name;
  field("state", state_name + (reason_adds ? " (" + job.state_reason() + ")" : ""));
  // A failed run's last log lines, under its state: the why, without a
  // second call. The job wrote them: escaped.
  for (const std::string& line : job.log_tail()) out += "  | " + EscapeForTerminal(line) + "\n";
  std::string exit = "-";
  if (job.has_term_signal()) {
    exit = "killed by " + SignalName(job.term_signal()) + " (" + std::to_string(job.term_signal()) + ")";
  } else if (job.has_exit_code()) {
    exit = "code " + std::to_string(job.exit_code());
  }
  field("exit", exit);
  if (job.pid() > 0) {
    field("pid", std::to_string(job.pid()) + " (pgid " + std::to_string(job.pgid()) + ", tmux session " +
                     OrDash(job.tmux_session()) + ")");
  } else {
    field("pid", "-");  // queued, or not started yet: no process
  }
  std::string runtime = FormatDuration(JobRuntime(job, now_unix_ms));
  if (job.started_unix_ms() <= 0) runtime = "- (not started)";
  else if (job.ended_unix_ms() <= 0) runtime += " (still running)";
  field("runtime", runtime);
  field("command", OrDash(QuotedCommand(spec.command())));
  // What the run got, where it differs from what was asked (--anchors, a
  // relaunch's --retry-args and knob changes).
  if (job.run_command_size() > 0 && !std::equal(job.run_command().begin(), job.run_command().end(),
                                                spec.command().begin(), spec.command().end())) {
    field("run command", QuotedCommand(job.run_command()));
  }
  if (!job.run_env().empty()) {
    // The variables gpuctl set; the rest is the agent's and --env.
    std::vector<std::pair<std::string, std::string>> vars(job.run_env().begin(), job.run_env().end());
    std::sort(vars.begin(), vars.end());
    // One variable a line, the label once.
    for (size_t i = 0; i < vars.size(); ++i) {
      out += (i == 0 ? std::string("run env:    ") : std::string(12, ' ')) +
             EscapeForTerminal(vars[i].first + "=" + vars[i].second) + "\n";
    }
  }
  field("cwd", OrDash(spec.cwd()));
  field("anchors", spec.has_anchors() ? std::to_string(spec.anchors()) : "-");
  field("alloc conf", OrDash(spec.alloc_conf()));
  field("gpus", OrDash(spec.gpus()) + (spec.num_gpus() > 0 ? " (asked: " + std::to_string(spec.num_gpus()) + ")" : ""));
  if (job.state() == v1::JOB_STATE_QUEUED) {
    field("queue", "#" + std::to_string(job.queue_position()) + ", waiting for " + OrDash(job.waiting_for()));
  }
  field("container", OrDash(spec.container()));
  field("step", m.has_step() ? std::to_string(m.step()) : "-");
  field("loss", m.has_loss() ? Loss(m.loss()) : "-");
  std::string throughput = m.has_throughput() ? Rate(m.throughput()) : "-";
  if (m.has_best_throughput()) throughput += " (best " + Rate(m.best_throughput()) + ")";
  field("throughput", throughput);
  for (const v1::JobGpuMemory& gpu : job.gpu_memory()) {
    field("gpu " + std::to_string(gpu.index()),
          FormatBytes(gpu.used_bytes()) + " now, peak " + FormatBytes(gpu.peak_bytes()) +
              (gpu.total_bytes() > 0 ? " of " + FormatBytes(gpu.total_bytes()) : ""));
  }
  if (spec.kind() == "build") field("build", BuildText(job.build()));
  field("restarts", std::to_string(job.restart_count()));
  if (JobOnOom(spec) == OnOom::kRecover) {
    std::string policy = "recover, attempt " + std::to_string(spec.attempt()) + " of at most " +
                         std::to_string(spec.oom_retries() + 1);
    for (const std::string& knob : spec.oom_knobs()) policy += ", knob " + knob;
    field("on oom", policy);
  }
  if (job.attempts_size() > 0) {
    // The lineage: each earlier attempt, how it ended and what the next one changed.
    field("attempts", std::to_string(job.attempts_size() + 1));
    for (const v1::JobAttempt& a : job.attempts()) {
      std::string line = "  #" + std::to_string(a.attempt()) + " run " + a.run_id() + ": " +
                         JobStateName(a.state()) + ", step " + (a.has_step() ? std::to_string(a.step()) : "-");
      if (a.has_best_throughput()) line += ", best " + Rate(a.best_throughput());
      line += ", alloc conf " + OrDash(a.alloc_conf());
      if (a.events() > 0) line += ", " + std::to_string(a.events()) + " event" + (a.events() == 1 ? "" : "s");
      std::string changes;
      for (const std::string& c : a.changes()) changes += (changes.empty() ? "" : ", ") + c;
      if (!a.resumed_from().empty()) line += ", from " + a.resumed_from();
      if (!changes.empty()) line += "; then " + changes;
      out += EscapeForTerminal(line) + "\n";
    }
    out += "  #" + std::to_string(spec.attempt()) + " run " + EscapeForTerminal(job.run_id()) + ": " +
           JobStateName(job.state()) +
           (spec.resume_from().empty() ? std::string() : ", from " + EscapeForTerminal(spec.resume_from())) +
           " (this run)\n";
  }
  ProgressText(job, now_unix_ms, field);
  field("log", FormatBytes(job.log_bytes()) + (job.log_path().empty() ? "" : " in " + job.log_path()));
  // Every attempt's, when earlier attempts had some: "3 (1 this run)".
  const uint64_t this_run = static_cast<uint64_t>(job.events_size()) + job.events_dropped();
  std::string events = std::to_string(job.events_size());
  if (job.events_total() > this_run) {
    events = std::to_string(job.events_total()) + " (" + std::to_string(this_run) + " this run)";
  }
  field("events", events + (job.events_dropped() > 0 ? " (and " + std::to_string(job.events_dropped()) +
                                                           " older ones that decide nothing, dropped)"
                                                     : ""));
  for (const v1::JobEvent& e : job.events()) out += "  " + JobEventToText(e) + "\n";
  return out;
}

std::vector<std::string> JobListHeader() {
  return {"NAME", "KIND", "STATE", "PID", "RUNTIME", "STEP", "LOSS", "THROUGHPUT", "EVENTS"};
}

std::vector<std::string> JobListRow(const v1::Job& job, int64_t now_unix_ms) {
  const v1::JobMetrics& m = job.metrics();
  return {job.spec().name(), JobKind(job.spec()), JobStateSummary(job), job.pid() > 0 ? std::to_string(job.pid()) : "-",
          job.started_unix_ms() > 0 ? FormatDuration(JobRuntime(job, now_unix_ms)) : "-",
          m.has_step() ? std::to_string(m.step()) : "-", m.has_loss() ? Loss(m.loss()) : "-",
          m.has_throughput() ? Rate(m.throughput()) : "-", EventsSummary(job)};
}

std::string FormatLoss(double loss) { return Loss(loss); }
std::string FormatThroughput(const v1::Throughput& throughput) { return Rate(throughput); }

std::string JobListToText(const v1::ListJobsResponse& list, int64_t now_unix_ms) {
  if (list.jobs_size() == 0) return "no jobs\n";
  Table table(JobListHeader());
  std::string waiting;
  for (const v1::Job& job : list.jobs()) {
    table.AddRow(JobListRow(job, now_unix_ms));
    if (job.state() == v1::JOB_STATE_QUEUED) {
      waiting += "  #" + std::to_string(job.queue_position()) + " " +
                 EscapeForTerminal(job.spec().name() + " waits for " + OrDash(job.waiting_for())) + "\n";
    }
  }
  return table.Render() + (waiting.empty() ? "" : "queued:\n" + waiting);
}

std::string JobStartedText(const v1::Job& job, const std::string& agent_flag) {
  const std::string name = EscapeForTerminal(job.spec().name());
  std::string gpuctl = "gpuctl " + agent_flag;
  if (job.state() == v1::JOB_STATE_QUEUED) {
    return "queued job " + name + " (#" + std::to_string(job.queue_position()) + "): waiting for " +
           EscapeForTerminal(OrDash(job.waiting_for())) + "\n" + "see the queue: " + gpuctl + "train list\n" +
           "cancel it:      " + gpuctl + "train stop " + name + "\n";
  }
  return "started job " + name + " (pid " + std::to_string(job.pid()) + ", tmux session " +
         EscapeForTerminal(OrDash(job.tmux_session())) + ")\n" +
         "follow its log: " + gpuctl + "train logs -f " + name + "\n" +
         "see its state:  " + gpuctl + "train status " + name + "\n" +
         "stop it:        " + gpuctl + "train stop " + name + "\n" +
         "attach to it:   " + gpuctl + "train attach " + name + "\n";
}

std::string JobReplacedText(const v1::Job& existing, int64_t now_unix_ms) {
  if (existing.ended_unix_ms() <= 0 || existing.state() == v1::JOB_STATE_QUEUED) return "";
  std::string ago = FormatDuration(std::chrono::milliseconds(std::max<int64_t>(now_unix_ms - existing.ended_unix_ms(), 0)));
  std::string line = "replacing the ended job " + existing.spec().name() + " (" + JobStateName(existing.state()) + " " +
                     ago + " ago" + (existing.state_reason().empty() ? "" : ": " + existing.state_reason()) +
                     "; its log stays as " + (existing.log_path().empty() ? "output.log" : existing.log_path()) +
                     ".prev)";
  return EscapeForTerminal(line) + "\n";
}

std::string JobStoppedText(const v1::Job& job, int64_t now_unix_ms) {
  std::string out = "job " + job.spec().name() + ": " + JobStateSummary(job);
  if (job.started_unix_ms() > 0) out += " after " + FormatDuration(JobRuntime(job, now_unix_ms));
  if (!job.state_reason().empty()) out += " (" + job.state_reason() + ")";
  return EscapeForTerminal(out) + "\n";
}

}  // namespace gpuctl::client
