#include "client/multinode/multinode_commands.h"

#include <algorithm>
#include <charconv>
#include <mutex>
#include <ostream>

#include "client/commands/command_context.h"
#include "client/commands/train_subcommands.h"
#include "client/fleet/fan_out.h"
#include "client/fleet/node_selector.h"
#include "client/multinode/multinode_parts.h"
#include "client/multinode/multinode_plan.h"
#include "client/multinode/multinode_store.h"
#include "client/multinode/multinode_supervise.h"
#include "client/output/fleet_text.h"
#include "common/json_text.h"
#include "common/units.h"
#include "common/utf8.h"

namespace gpuctl::client {
namespace {

Result<MultinodeJob> FindJob(const std::string& name) { return DefaultMultinodeStore().Find(name); }

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
  Result<std::vector<Node>> nodes = FindNodes(SplitNodeList(multinode.nodes));
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
  if (ctx.global.json() && !multinode.wait) {
    ctx.console.out << DumpJson(PartsJson(job, replies), -1) << "\n";
  } else if (!ctx.global.json()) {
    ctx.console.out << "started " << PartsHeader(job).substr(0) << PartsTable(job, replies)
                    << "follow: gpuctl train logs " << job.name << " -f\n"
                    << "stop:   gpuctl train stop " << job.name << "\n";
  }
  ctx.console.out.flush();
  if (multinode.wait) ctx.exit_code = SuperviseMultinode(ctx, pool, job, *grace);
}

bool IsMultinodeJob(CommandContext& ctx, const std::string& name) {
  if (!ctx.global.node.empty() || !ctx.global.nodes.empty() || !ctx.global.agent.empty()) return false;
  // A file that cannot be read is not "no": the handlers then say why.
  return DefaultMultinodeStore().Find(name).status().code() != ErrorCode::kNotFound;
}


void RunMultinodeStatus(CommandContext& ctx, const std::string& name) {
  Result<MultinodeJob> job = FindJob(name);
  if (!job.ok()) return ctx.Fail(job.status());
  Result<std::unique_ptr<NodePool>> pool = PoolFor(ctx, job->nodes);
  if (!pool.ok()) return ctx.Fail(pool.status());
  std::vector<PartReply> parts = GetParts(**pool, name);
  if (ctx.global.json()) {
    ctx.console.out << DumpJson(PartsJson(*job, parts), -1) << "\n";
  } else {
    ctx.console.out << PartsHeader(*job) << PartsTable(*job, parts);
    for (size_t i = 0; i < parts.size(); ++i) {
      bool bad = parts[i].answer.status.ok() && !PartRunning(parts[i].job) &&
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
  if (ctx.global.json()) {
    ctx.console.out << DumpJson(PartsJson(*job, parts), -1) << "\n";
  } else {
    ctx.console.out << "stopped " << PartsHeader(*job) << PartsTable(*job, parts);
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
  if (ctx.global.json()) {
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
    if (!answers[i].status.ok()) {
      ctx.console.err << "[" << job->nodes[i] << "] error: " << EscapeForTerminal(answers[i].status.message()) << "\n";
    }
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
