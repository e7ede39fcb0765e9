#include "client/multinode/multinode_supervise.h"

#include <algorithm>
#include <ostream>

#include "agents/sys/clock.h"
#include "client/commands/command_context.h"
#include "client/multinode/multinode_parts.h"
#include "client/multinode/multinode_plan.h"
#include "client/output/job_state.h"
#include "common/event_kinds.h"
#include "common/json_text.h"
#include "common/units.h"
#include "common/utf8.h"

namespace gpuctl::client {
namespace {

constexpr std::chrono::seconds kPollInterval{1};
// How long an agent may take to relaunch a part after a CUDA OOM.
constexpr std::chrono::seconds kRelaunchWait{60};

// How surely a part that ended badly is the cause rather than a casualty:
// when one rank dies the others' collectives fail a moment later, so a part
// killed (lost, by a signal, by the guard) or with a CUDA OOM or NCCL error
// in its log outranks one that merely exited non-zero.
int CauseRank(const PartReply& part) {
  if (!part.answer.status.ok()) return part.answer.reached ? 0 : 3;
  const v1::Job& job = part.job;
  if (job.state() == v1::JOB_STATE_LOST || job.state() == v1::JOB_STATE_KILLED_BY_GUARD || job.has_term_signal()) return 3;
  bool telling = std::any_of(job.events().begin(), job.events().end(), [](const v1::JobEvent& e) {
    return e.kind() == event_kind::kCudaOom || e.kind() == event_kind::kNcclError;
  });
  return telling ? 2 : 1;
}

bool EndedBadly(const PartReply& part) {
  if (!part.answer.status.ok()) return !part.answer.reached;
  return !PartRunning(part.job) && part.job.state() != v1::JOB_STATE_SUCCEEDED;
}

// The part to blame among those that ended badly: the likeliest cause, then
// the earliest to end.
size_t Culprit(const std::vector<PartReply>& parts) {
  size_t best = parts.size();
  for (size_t i = 0; i < parts.size(); ++i) {
    if (!EndedBadly(parts[i])) continue;
    if (best == parts.size() || CauseRank(parts[i]) > CauseRank(parts[best]) ||
        (CauseRank(parts[i]) == CauseRank(parts[best]) && parts[i].job.ended_unix_ms() < parts[best].job.ended_unix_ms())) {
      best = i;
    }
  }
  return best;
}

// After an OOM relaunch of parts `relaunched` by their agents: every other
// part is stopped and started again with the same change, so all ranks meet
// again in the rendezvous (the same id) with the same settings.
Status Realign(CommandContext& ctx, NodePool& pool, const MultinodeJob& job, const std::vector<PartReply>& parts,
               const std::vector<size_t>& relaunched) {
  const v1::JobSpec& changed = parts[relaunched.front()].job.spec();
  std::vector<bool> redo(parts.size(), true);
  for (size_t i : relaunched) redo[i] = false;
  if (ctx.global.format() != OutputFormat::kJson) {
    size_t p = relaunched.front();
    // Why its agent relaunched it: the earlier attempt's end says.
    const auto& attempts = parts[p].job.attempts();
    const std::string ended = attempts.empty() ? std::string() : attempts.rbegin()->state_reason();
    // An OOM remediation's changes read "FLAG: OLD -> NEW"; a failure's relaunch changes no setting.
    const bool remediated = !attempts.empty() && std::any_of(attempts.rbegin()->changes().begin(),
                                                             attempts.rbegin()->changes().end(),
                                                             [](const std::string& c) { return c.find(" -> ") != std::string::npos; });
    const char* after = ended.rfind("hung:", 0) == 0                  ? "a hang"
                        : ended.find(" faulted: ") != std::string::npos ? "a GPU fault"
                        : remediated                                    ? "a CUDA OOM"
                                                                        : "a failure";
    ctx.console.out << "part on " << job.nodes[p] << " (rank " << p << ") was relaunched after " << after
                    << " (anchors " << (changed.has_anchors() ? std::to_string(changed.anchors()) : "-")
                    << ", alloc conf " << (changed.alloc_conf().empty() ? "-" : EscapeForTerminal(changed.alloc_conf()))
                    << (changed.resume_from().empty() ? "" : ", resume from " + EscapeForTerminal(changed.resume_from()))
                    << "): relaunching the other parts with the same change\n"
                    << std::flush;
  }
  std::vector<NodeAnswer> answers = pool.AskAll(64, [&](size_t i, AgentClient& agent) -> Status {
    if (!redo[i]) return Status::Ok();
    Result<v1::JobSpec> spec = MirrorRelaunch(parts[i].job.spec(), changed);
    if (!spec.ok()) return spec.status();
    if (PartRunning(parts[i].job)) {
      if (Result<v1::Job> stopped = agent.StopJob(job.name, std::chrono::seconds(5)); !stopped.ok()) return stopped.status();
    }
    if (Result<v1::RemoveJobResponse> removed = agent.RemoveJob(job.name); !removed.ok()) return removed.status();
    v1::StartJobRequest request;
    *request.mutable_spec() = std::move(*spec);
    return agent.StartJob(request).status();
  });
  for (size_t i = 0; i < answers.size(); ++i) {
    if (!answers[i].status.ok()) return answers[i].status.Wrap("relaunching the part on " + job.nodes[i]);
  }
  return Status::Ok();
}

// A part just called hung by its agent: every other part's stacks are
// dumped now too (each agent into its own job directory), so the hang is
// seen from every rank, the lagging one among them.
void DumpEveryPart(CommandContext& ctx, NodePool& pool, const MultinodeJob& job, size_t hung) {
  std::vector<std::string> dirs(job.nodes.size());
  std::vector<NodeAnswer> answers = pool.AskAll(64, [&](size_t i, AgentClient& agent) -> Status {
    if (i == hung) return Status::Ok();  // its agent dumped it already
    Result<v1::DumpJobResponse> dump = agent.DumpJob(job.name);
    if (!dump.ok()) return dump.status();
    dirs[i] = dump->dump_dir();
    return Status::Ok();
  });
  if (ctx.global.json()) return;
  ctx.console.out << "part on " << job.nodes[hung] << " (rank " << hung << ") is hung: dumped every part's stacks\n";
  for (size_t i = 0; i < answers.size(); ++i) {
    if (i == hung) continue;
    ctx.console.out << "  " << job.nodes[i] << ": "
                    << (answers[i].status.ok() ? EscapeForTerminal(dirs[i]) : EscapeForTerminal(answers[i].status.message()))
                    << "\n";
  }
  ctx.console.out << std::flush;
}

}  // namespace

// --wait: until every part has ended. When parts end badly, the likeliest
// cause among them (looked at over a few seconds, as the others fail in
// its wake, and even when none still runs: an agent may be about to
// relaunch its part) is named as the job's failure, and the parts still
// running are stopped once `grace` has passed.
int SuperviseMultinode(CommandContext& ctx, NodePool& pool, const MultinodeJob& job, std::chrono::milliseconds grace) {
  std::ostream& out = ctx.console.out;
  const bool text = !ctx.global.json();
  const auto settle = std::min<std::chrono::milliseconds>(grace, std::chrono::seconds(5));
  std::vector<std::string> last(job.nodes.size());
  // When a part was first seen ended badly; the epoch: none yet.
  std::chrono::steady_clock::time_point first_bad{};
  const auto none = std::chrono::steady_clock::time_point{};
  std::string failure;
  bool stopped_others = false;
  std::vector<PartReply> parts;
  std::vector<uint32_t> restarts(job.nodes.size(), 0);
  std::vector<int64_t> hung_since(job.nodes.size(), 0);  // the hang each part was last seen in
  const sys::RealClock clock;
  while (true) {
    parts = GetParts(pool, job.name);
    auto now = clock.SteadyNow();
    // An agent relaunched its part after a CUDA OOM (on_oom recover): the
    // others failed in its wake, or would train with other settings.
    std::vector<size_t> relaunched;
    for (size_t i = 0; i < parts.size(); ++i) {
      if (!parts[i].answer.status.ok()) continue;
      if (parts[i].job.restart_count() > restarts[i] && PartRunning(parts[i].job)) relaunched.push_back(i);
      restarts[i] = std::max(restarts[i], parts[i].job.restart_count());
    }
    for (size_t i = 0; i < parts.size(); ++i) {
      if (!parts[i].answer.status.ok()) continue;
      const int64_t since = parts[i].job.progress().hung_since_unix_ms();
      if (since > 0 && since != hung_since[i]) DumpEveryPart(ctx, pool, job, i);
      hung_since[i] = since;
    }
    if (!relaunched.empty() && relaunched.size() < parts.size()) {
      if (Status s = Realign(ctx, pool, job, parts, relaunched); !s.ok()) {
        failure = s.message();
        break;
      }
      for (size_t i = 0; i < parts.size(); ++i) {
        if (std::find(relaunched.begin(), relaunched.end(), i) == relaunched.end()) restarts[i] = 0;
      }
      first_bad = none;
      std::fill(last.begin(), last.end(), std::string());
      continue;
    }
    for (size_t i = 0; i < parts.size(); ++i) {
      std::string summary = PartSummary(parts[i]);
      if (summary != last[i] && text) out << job.nodes[i] << " (rank " << i << "): " << summary << "\n" << std::flush;
      last[i] = summary;
      if (EndedBadly(parts[i]) && first_bad == none) first_bad = now;
    }
    bool any_running = std::any_of(parts.begin(), parts.end(), [](const PartReply& p) {
      return p.answer.status.ok() && PartRunning(p.job);
    });
    // Only an unreachable node can stop being bad (a part that ended stays
    // ended): it was a network blip, and nothing is stopped for it.
    if (first_bad != none && std::none_of(parts.begin(), parts.end(), EndedBadly)) {
      if (text && !failure.empty()) out << "every part answers again: nothing is stopped\n" << std::flush;
      first_bad = none;
      failure.clear();
    }
    // A part that died of a CUDA OOM under --on-oom recover is about to be
    // relaunched by its agent: give it longer before calling the job failed.
    bool relaunch_coming = std::any_of(parts.begin(), parts.end(), [](const PartReply& p) {
      return EndedBadly(p) && p.answer.status.ok() && JobOnOom(p.job.spec()) == OnOom::kRecover &&
             std::any_of(p.job.events().begin(), p.job.events().end(),
                         [](const v1::JobEvent& e) { return e.kind() == event_kind::kCudaOom; });
    });
    auto wait_for = relaunch_coming ? std::max<std::chrono::milliseconds>(settle, kRelaunchWait) : settle;
    if (first_bad != none && failure.empty() && now - first_bad >= wait_for) {
      size_t culprit = Culprit(parts);
      failure = "part on " + job.nodes[culprit] + " (rank " + std::to_string(culprit) + ") " + PartSummary(parts[culprit]);
      if (text && any_running) {
        out << failure << "; the other parts are stopped " << (now - first_bad >= grace ? "now" : "in " + FormatDuration(std::chrono::duration_cast<std::chrono::milliseconds>(grace - (now - first_bad))))
            << " unless they end first\n" << std::flush;
      }
    }
    bool all_answered = std::all_of(parts.begin(), parts.end(), [](const PartReply& p) { return p.answer.status.ok(); });
    // Done: every part ended well, or the failure is settled and nothing runs.
    if (!any_running && ((all_answered && first_bad == none) || !failure.empty())) break;
    if (!failure.empty() && first_bad != none && !stopped_others && now - first_bad >= grace) {
      std::vector<bool> running(parts.size());
      for (size_t i = 0; i < parts.size(); ++i) running[i] = parts[i].answer.status.ok() && PartRunning(parts[i].job);
      if (text) out << "stopping the parts still running\n" << std::flush;
      StopRunningParts(pool, job.name, running, std::chrono::seconds(10));
      stopped_others = true;
    }
    sys::SleepFor(clock, kPollInterval);
  }
  if (ctx.global.json()) {
    nlohmann::json result = PartsJson(job, parts);
    result["failure"] = failure.empty() ? nlohmann::json(nullptr) : nlohmann::json(failure);
    out << DumpJson(result, -1) << "\n";
  } else {
    out << (failure.empty() ? "multi-node job " + job.name + " succeeded on every node\n"
                            : "multi-node job " + job.name + " failed: " + failure + "\n");
  }
  out.flush();
  return failure.empty() ? kExitOk : kExitFailure;
}

}  // namespace gpuctl::client
