#include "client/multinode/multinode_commands.h"

#include <algorithm>
#include <charconv>
#include <mutex>
#include <ostream>
#include <thread>

#include "client/commands/command_context.h"
#include "client/commands/train_subcommands.h"
#include "client/fleet/fan_out.h"
#include "client/multinode/multinode_plan.h"
#include "client/multinode/multinode_store.h"
#include "client/output/fleet_text.h"
#include "client/output/job_json.h"
#include "client/output/job_state.h"
#include "client/output/job_text.h"
#include "client/output/table.h"
#include "common/json_text.h"
#include "common/units.h"

namespace gpuctl::client {
namespace {

constexpr std::chrono::seconds kPartTimeout{20};
constexpr std::chrono::seconds kPollInterval{1};

bool Json(const CommandContext& ctx) { return ctx.global.format() == OutputFormat::kJson; }

bool Running(const v1::Job& job) {
  return job.state() == v1::JOB_STATE_RUNNING || job.state() == v1::JOB_STATE_STARTING ||
         job.state() == v1::JOB_STATE_QUEUED;
}

std::vector<std::string> SplitNames(const std::string& text) {
  std::vector<std::string> names;
  size_t start = 0;
  while (start <= text.size()) {
    size_t comma = std::min(text.find(',', start), text.size());
    names.push_back(text.substr(start, comma - start));
    start = comma + 1;
  }
  return names;
}

// The job's nodes from nodes.json, in rank order.
Result<std::vector<Node>> FindNodes(const std::vector<std::string>& names) {
  Result<std::vector<Node>> known = DefaultNodeStore().List();
  if (!known.ok()) return known.status();
  std::vector<Node> nodes;
  for (const std::string& name : names) {
    auto it = std::find_if(known->begin(), known->end(), [&](const Node& n) { return n.name == name; });
    if (it == known->end()) {
      return InvalidArgument("no node named '" + name + "'; add it with: gpuctl node add " + name +
                             " --host [USER@]ADDR[:PORT]");
    }
    nodes.push_back(*it);
  }
  return nodes;
}

Result<std::unique_ptr<NodePool>> PoolFor(CommandContext& ctx, const std::vector<std::string>& names) {
  Result<std::vector<Node>> nodes = FindNodes(names);
  if (!nodes.ok()) return nodes.status();
  return std::make_unique<NodePool>(
      NodePool::ForCommand(ctx, std::move(*nodes), {.concurrency = 64, .timeout = kPartTimeout}));
}

struct PartReply {
  v1::Job job;
  NodeAnswer answer;
};

std::vector<PartReply> GetParts(NodePool& pool, const std::string& name) {
  std::vector<PartReply> parts(pool.size());
  std::vector<NodeAnswer> answers = pool.AskAll(64, [&](size_t i, AgentClient& agent) -> Status {
    Result<v1::Job> job = agent.GetJob(name);
    if (!job.ok()) return job.status();
    parts[i].job = std::move(*job);
    return Status::Ok();
  });
  for (size_t i = 0; i < parts.size(); ++i) parts[i].answer = answers[i];
  return parts;
}

// "failed (exit 1): Traceback ..." or "unreachable: ..." for one part.
std::string PartSummary(const PartReply& part) {
  if (!part.answer.status.ok()) return "error: " + FirstLine(part.answer.status.message());
  std::string text = JobStateName(part.job.state());
  if (part.job.has_exit_code()) text += " (exit " + std::to_string(part.job.exit_code()) + ")";
  if (part.job.has_term_signal()) text += " (" + SignalName(part.job.term_signal()) + ")";
  // The reason, where it says more than the state and exit already do.
  const std::string& reason = part.job.state_reason();
  if (!reason.empty() && reason != text && reason.rfind("exited", 0) != 0 && reason != JobStateName(part.job.state())) {
    text += ": " + FirstLine(reason);
  }
  return text;
}

std::string PartsTable(const MultinodeJob& job, const std::vector<PartReply>& parts) {
  std::vector<std::string> header = JobListHeader();
  header.insert(header.begin(), {"NODE", "RANK"});
  Table table(header);
  int64_t now = NowUnixMs();
  for (size_t i = 0; i < parts.size(); ++i) {
    if (!parts[i].answer.status.ok()) {
      table.AddSpanningRow(job.nodes[i], "error: " + FirstLine(parts[i].answer.status.message()));
      continue;
    }
    std::vector<std::string> row = JobListRow(parts[i].job, now);
    row.insert(row.begin(), {job.nodes[i], std::to_string(i)});
    table.AddRow(std::move(row));
  }
  return table.Render();
}

nlohmann::json PartsJson(const MultinodeJob& job, const std::vector<PartReply>& parts) {
  nlohmann::json list = nlohmann::json::array();
  int64_t now = NowUnixMs();
  for (size_t i = 0; i < parts.size(); ++i) {
    nlohmann::json part = parts[i].answer.status.ok()
                              ? JobToJson(parts[i].job, now)
                              : nlohmann::json{{"error", parts[i].answer.status.message()}};
    part["node"] = job.nodes[i];
    part["rank"] = i;
    part["reached"] = parts[i].answer.reached;
    list.push_back(std::move(part));
  }
  return {{"name", job.name},
          {"nodes", job.nodes},
          {"rdzv_endpoint", job.rdzv_endpoint},
          {"rdzv_id", job.rdzv_id},
          {"nproc_per_node", job.nproc_per_node},
          {"parts", list}};
}

std::string Header(const MultinodeJob& job) {
  std::string nodes;
  for (const std::string& n : job.nodes) nodes += (nodes.empty() ? "" : ",") + n;
  return "multi-node job " + job.name + ": " + std::to_string(job.nodes.size()) + " parts on " + nodes +
         ", rendezvous " + job.rdzv_endpoint + " id " + job.rdzv_id + "\n";
}

// Stops the parts still running (grace each), at once.
void StopRunning(NodePool& pool, const std::string& name, const std::vector<bool>& which,
                 std::chrono::milliseconds grace) {
  pool.AskAll(64, [&](size_t i, AgentClient& agent) -> Status {
    if (!which[i]) return Status::Ok();
    return agent.StopJob(name, grace).status();
  });
}

// How surely a part that ended badly is the cause rather than a casualty:
// when one rank dies the others' collectives fail a moment later, so a part
// killed (lost, by a signal, by the guard) or with a CUDA OOM or NCCL error
// in its log outranks one that merely exited non-zero.
int CauseRank(const PartReply& part) {
  if (!part.answer.status.ok()) return part.answer.reached ? 0 : 3;
  const v1::Job& job = part.job;
  if (job.state() == v1::JOB_STATE_LOST || job.state() == v1::JOB_STATE_KILLED_BY_GUARD || job.has_term_signal()) return 3;
  bool telling = std::any_of(job.events().begin(), job.events().end(), [](const v1::JobEvent& e) {
    return e.kind() == "cuda_oom" || e.kind() == "nccl_error";
  });
  return telling ? 2 : 1;
}

bool EndedBadly(const PartReply& part) {
  if (!part.answer.status.ok()) return !part.answer.reached;
  return !Running(part.job) && part.job.state() != v1::JOB_STATE_SUCCEEDED;
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
    ctx.console.out << "part on " << job.nodes[p] << " (rank " << p << ") was relaunched after a CUDA OOM (anchors "
                    << (changed.has_anchors() ? std::to_string(changed.anchors()) : "-") << ", alloc conf "
                    << (changed.alloc_conf().empty() ? "-" : changed.alloc_conf())
                    << "): relaunching the other parts with the same change\n"
                    << std::flush;
  }
  std::vector<NodeAnswer> answers = pool.AskAll(64, [&](size_t i, AgentClient& agent) -> Status {
    if (!redo[i]) return Status::Ok();
    Result<v1::JobSpec> spec = MirrorRelaunch(parts[i].job.spec(), changed);
    if (!spec.ok()) return spec.status();
    if (Running(parts[i].job)) {
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

// --wait: until every part has ended. When parts end badly, the likeliest
// cause among them (looked at over a few seconds, as the others fail in
// its wake) is named as the job's failure, and the parts still running are
// stopped once `grace` has passed.
int Supervise(CommandContext& ctx, NodePool& pool, const MultinodeJob& job, std::chrono::milliseconds grace) {
  std::ostream& out = ctx.console.out;
  const bool text = !Json(ctx);
  const auto settle = std::min<std::chrono::milliseconds>(grace, std::chrono::seconds(5));
  std::vector<std::string> last(job.nodes.size());
  // When a part was first seen ended badly; the epoch: none yet.
  std::chrono::steady_clock::time_point first_bad{};
  const auto none = std::chrono::steady_clock::time_point{};
  std::string failure;
  bool stopped_others = false;
  std::vector<PartReply> parts;
  std::vector<uint32_t> restarts(job.nodes.size(), 0);
  while (true) {
    parts = GetParts(pool, job.name);
    auto now = std::chrono::steady_clock::now();
    // An agent relaunched its part after a CUDA OOM (on_oom recover): the
    // others failed in its wake, or would train with other settings.
    std::vector<size_t> relaunched;
    for (size_t i = 0; i < parts.size(); ++i) {
      if (!parts[i].answer.status.ok()) continue;
      if (parts[i].job.restart_count() > restarts[i] && Running(parts[i].job)) relaunched.push_back(i);
      restarts[i] = std::max(restarts[i], parts[i].job.restart_count());
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
      return p.answer.status.ok() && Running(p.job);
    });
    // Only an unreachable node can stop being bad (a part that ended stays
    // ended): it was a network blip, and nothing is stopped for it.
    if (first_bad != none && std::none_of(parts.begin(), parts.end(), EndedBadly)) {
      if (text && !failure.empty()) out << "every part answers again: nothing is stopped\n" << std::flush;
      first_bad = none;
      failure.clear();
    }
    if (first_bad != none && failure.empty() && (now - first_bad >= settle || !any_running)) {
      size_t culprit = Culprit(parts);
      failure = "part on " + job.nodes[culprit] + " (rank " + std::to_string(culprit) + ") " + PartSummary(parts[culprit]);
      if (text && any_running) {
        out << failure << "; the other parts are stopped " << (now - first_bad >= grace ? "now" : "in " + FormatDuration(std::chrono::duration_cast<std::chrono::milliseconds>(grace - (now - first_bad))))
            << " unless they end first\n" << std::flush;
      }
    }
    bool all_answered = std::all_of(parts.begin(), parts.end(), [](const PartReply& p) { return p.answer.status.ok(); });
    if (!any_running && (all_answered || !failure.empty())) break;
    if (!failure.empty() && first_bad != none && !stopped_others && now - first_bad >= grace) {
      std::vector<bool> running(parts.size());
      for (size_t i = 0; i < parts.size(); ++i) running[i] = parts[i].answer.status.ok() && Running(parts[i].job);
      if (text) out << "stopping the parts still running\n" << std::flush;
      StopRunning(pool, job.name, running, std::chrono::seconds(10));
      stopped_others = true;
    }
    std::this_thread::sleep_for(kPollInterval);
  }
  if (Json(ctx)) {
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

}  // namespace

void RunMultinodeStart(CommandContext& ctx, const TrainStartFlags& flags, const MultinodeFlags& multinode) {
  if (!ctx.global.node.empty() || !ctx.global.nodes.empty() || !ctx.global.agent.empty()) {
    return ctx.Fail(InvalidArgument("--multinode names its nodes itself: drop --node, --nodes and --agent"));
  }
  if (Status s = CheckCommandAfterSeparator(ctx.args, flags.command); !s.ok()) return ctx.Fail(s);
  uint32_t nproc = 0;
  const std::string& n = multinode.nproc_per_node;
  auto [end, ec] = std::from_chars(n.data(), n.data() + n.size(), nproc);
  if (n.empty() || ec != std::errc() || end != n.data() + n.size()) {
    return ctx.Fail(InvalidArgument("--nproc-per-node must be a whole number, got '" + n + "'"));
  }
  Result<std::chrono::milliseconds> grace = ParseDuration(multinode.grace);
  if (!grace.ok()) return ctx.Fail(grace.status().Wrap("--grace"));
  // The parts run on other hosts: this directory means nothing there.
  Result<v1::StartJobRequest> base = BuildStartJobRequest(flags, "");
  if (!base.ok()) return ctx.Fail(base.status());
  Result<std::vector<Node>> nodes = FindNodes(SplitNames(multinode.nodes));
  if (!nodes.ok()) return ctx.Fail(nodes.status());
  MultinodeOptions options{.nodes = *nodes,
                           .nproc_per_node = nproc,
                           .rdzv_port = multinode.rdzv_port,
                           .rdzv_host = multinode.rdzv_host,
                           .rdzv_id = NewRdzvId(flags.name),
                           .torchrun = multinode.torchrun};
  Result<std::vector<MultinodePart>> parts = PlanMultinode(*base, options);
  if (!parts.ok()) return ctx.Fail(parts.status());

  MultinodeJob job{.name = flags.name, .nodes = {}, .rdzv_id = options.rdzv_id, .rdzv_endpoint = {},
                   .nproc_per_node = nproc, .started_unix_ms = NowUnixMs()};
  for (const Node& node : *nodes) job.nodes.push_back(node.name);
  std::string host = options.rdzv_host.empty() ? nodes->front().host : options.rdzv_host;
  job.rdzv_endpoint = host + ":" + std::to_string(options.rdzv_port);
  // A record before the effect: a start cut short still leaves NAME findable.
  MultinodeStore store = DefaultMultinodeStore();
  if (Status s = store.Add(job); !s.ok()) return ctx.Fail(s);

  NodePool pool = NodePool::ForCommand(ctx, *nodes, {.concurrency = 64, .timeout = kPartTimeout});
  std::vector<v1::Job> started(parts->size());
  std::vector<NodeAnswer> answers = pool.AskAll(64, [&](size_t i, AgentClient& agent) -> Status {
    Result<v1::Job> one = agent.StartJob((*parts)[i].request);
    if (!one.ok()) return one.status();
    started[i] = std::move(*one);
    return Status::Ok();
  });
  auto failed = std::find_if(answers.begin(), answers.end(), [](const NodeAnswer& a) { return !a.status.ok(); });
  if (failed != answers.end()) {
    // All or nothing: the parts that did start are stopped and removed.
    size_t bad = static_cast<size_t>(failed - answers.begin());
    pool.AskAll(64, [&](size_t i, AgentClient& agent) -> Status {
      if (!answers[i].status.ok()) return Status::Ok();
      (void)agent.StopJob(flags.name, std::chrono::milliseconds(0));
      return agent.RemoveJob(flags.name).status();
    });
    (void)store.Remove(flags.name);
    Status why = failed->status;
    return ctx.Fail(Status(why.code(), "starting part " + std::to_string(bad) + " of " + flags.name + " on " +
                                           job.nodes[bad] + ": " + why.message() +
                                           "\nnothing was left running: the parts that had started were removed"));
  }
  std::vector<PartReply> replies(started.size());
  for (size_t i = 0; i < started.size(); ++i) replies[i] = {started[i], answers[i]};
  if (Json(ctx) && !multinode.wait) {
    ctx.console.out << DumpJson(PartsJson(job, replies), -1) << "\n";
  } else if (!Json(ctx)) {
    ctx.console.out << "started " << Header(job).substr(0) << PartsTable(job, replies)
                    << "follow: gpuctl train logs " << job.name << " -f\n"
                    << "stop:   gpuctl train stop " << job.name << "\n";
  }
  ctx.console.out.flush();
  if (multinode.wait) ctx.exit_code = Supervise(ctx, pool, job, *grace);
}

bool IsMultinodeJob(CommandContext& ctx, const std::string& name) {
  if (!ctx.global.node.empty() || !ctx.global.nodes.empty() || !ctx.global.agent.empty()) return false;
  // A file that cannot be read is not "no": the handlers then say why.
  return DefaultMultinodeStore().Find(name).status().code() != ErrorCode::kNotFound;
}

namespace {

Result<MultinodeJob> FindJob(const std::string& name) { return DefaultMultinodeStore().Find(name); }

void FinishParts(CommandContext& ctx, const std::vector<PartReply>& parts) {
  std::vector<NodeAnswer> answers;
  for (const PartReply& p : parts) answers.push_back(p.answer);
  if (FanOutExitCode(answers) != kExitOk) ctx.exit_code = kExitSomeNodesUnreached;
}

}  // namespace

void RunMultinodeStatus(CommandContext& ctx, const std::string& name) {
  Result<MultinodeJob> job = FindJob(name);
  if (!job.ok()) return ctx.Fail(job.status());
  Result<std::unique_ptr<NodePool>> pool = PoolFor(ctx, job->nodes);
  if (!pool.ok()) return ctx.Fail(pool.status());
  std::vector<PartReply> parts = GetParts(**pool, name);
  if (Json(ctx)) {
    ctx.console.out << DumpJson(PartsJson(*job, parts), -1) << "\n";
  } else {
    ctx.console.out << Header(*job) << PartsTable(*job, parts);
    for (size_t i = 0; i < parts.size(); ++i) {
      bool bad = parts[i].answer.status.ok() && !Running(parts[i].job) &&
                 parts[i].job.state() != v1::JOB_STATE_SUCCEEDED;
      if (bad) ctx.console.out << job->nodes[i] << " (rank " << i << "): " << PartSummary(parts[i]) << "\n";
    }
  }
  ctx.console.out.flush();
  FinishParts(ctx, parts);
}

void RunMultinodeStop(CommandContext& ctx, const std::string& name, std::chrono::milliseconds grace) {
  Result<MultinodeJob> job = FindJob(name);
  if (!job.ok()) return ctx.Fail(job.status());
  Result<std::unique_ptr<NodePool>> pool = PoolFor(ctx, job->nodes);
  if (!pool.ok()) return ctx.Fail(pool.status());
  std::vector<PartReply> parts(job->nodes.size());
  std::vector<NodeAnswer> answers = (*pool)->AskAll(64, [&](size_t i, AgentClient& agent) -> Status {
    Result<v1::Job> stopped = agent.StopJob(name, grace);
    if (!stopped.ok()) return stopped.status();
    parts[i].job = std::move(*stopped);
    return Status::Ok();
  });
  for (size_t i = 0; i < parts.size(); ++i) parts[i].answer = answers[i];
  if (Json(ctx)) {
    ctx.console.out << DumpJson(PartsJson(*job, parts), -1) << "\n";
  } else {
    ctx.console.out << "stopped " << Header(*job) << PartsTable(*job, parts);
  }
  ctx.console.out.flush();
  FinishParts(ctx, parts);
}

void RunMultinodeRemove(CommandContext& ctx, const std::string& name) {
  Result<MultinodeJob> job = FindJob(name);
  if (!job.ok()) return ctx.Fail(job.status());
  Result<std::unique_ptr<NodePool>> pool = PoolFor(ctx, job->nodes);
  if (!pool.ok()) return ctx.Fail(pool.status());
  std::vector<NodeAnswer> answers = (*pool)->AskAll(64, [&](size_t, AgentClient& agent) -> Status {
    Result<v1::RemoveJobResponse> removed = agent.RemoveJob(name);
    // A part already gone is what we want.
    if (!removed.ok() && removed.status().code() != ErrorCode::kNotFound) return removed.status();
    return Status::Ok();
  });
  for (size_t i = 0; i < answers.size(); ++i) {
    if (!answers[i].status.ok()) {
      ctx.Fail(answers[i].status.Wrap("removing the part on " + job->nodes[i] + " (the job is kept)"));
      return;
    }
  }
  if (Status s = DefaultMultinodeStore().Remove(name); !s.ok()) return ctx.Fail(s);
  if (Json(ctx)) {
    ctx.console.out << DumpJson(nlohmann::json{{"removed", name}, {"nodes", job->nodes}}, -1) << "\n";
  } else {
    ctx.console.out << "removed multi-node job " << name << " from " << job->nodes.size() << " nodes\n";
  }
}

void RunMultinodeLogs(CommandContext& ctx, const std::string& name, bool follow) {
  Result<MultinodeJob> job = FindJob(name);
  if (!job.ok()) return ctx.Fail(job.status());
  Result<std::unique_ptr<NodePool>> pool = PoolFor(ctx, job->nodes);
  if (!pool.ok()) return ctx.Fail(pool.status());
  std::mutex out_mutex;
  std::ostream& out = ctx.console.out;
  // Whole lines only, each with its node, so parts interleave line by line.
  std::vector<NodeAnswer> answers = (*pool)->AskAll(64, [&](size_t i, AgentClient& agent) -> Status {
    std::string prefix = "[" + job->nodes[i] + "] ";
    std::string partial;
    auto emit = [&](std::string_view bytes) {
      partial.append(bytes);
      size_t newline = partial.rfind('\n');
      if (newline == std::string::npos) return static_cast<bool>(out);
      std::string lines;
      size_t start = 0;
      while (start <= newline) {
        size_t end = partial.find('\n', start);
        lines += prefix + partial.substr(start, end - start + 1);
        start = end + 1;
      }
      partial.erase(0, newline + 1);
      std::lock_guard lock(out_mutex);
      out << lines << std::flush;
      return static_cast<bool>(out);
    };
    v1::StreamLogsRequest request;
    request.set_name(name);
    request.set_follow(follow);
    Status s = StreamJobLog(agent, request, emit, [&](const std::string& line) {
      std::lock_guard lock(out_mutex);
      ctx.console.err << prefix << line << "\n" << std::flush;
    });
    if (!partial.empty()) {
      std::lock_guard lock(out_mutex);
      out << prefix << partial << "\n" << std::flush;
    }
    return s;
  });
  for (size_t i = 0; i < answers.size(); ++i) {
    if (!answers[i].status.ok()) ctx.console.err << "[" << job->nodes[i] << "] error: " << answers[i].status.message() << "\n";
  }
  std::vector<PartReply> parts(answers.size());
  for (size_t i = 0; i < answers.size(); ++i) parts[i].answer = answers[i];
  FinishParts(ctx, parts);
  if (ctx.exit_code == kExitOk) {
    auto bad = std::find_if(answers.begin(), answers.end(), [](const NodeAnswer& a) { return !a.status.ok(); });
    if (bad != answers.end()) ctx.exit_code = ExitCodeFor(bad->status);
  }
}

}  // namespace gpuctl::client
