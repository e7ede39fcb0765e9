#include "client/multinode/multinode_parts.h"

#include <algorithm>

#include "client/commands/command_context.h"
#include "client/commands/train_subcommands.h"
#include "client/output/fleet_text.h"
#include "client/output/job_json.h"
#include "client/output/job_state.h"
#include "client/output/job_text.h"
#include "client/output/table.h"

namespace gpuctl::client {

bool PartRunning(const v1::Job& job) {
  return job.state() == v1::JOB_STATE_RUNNING || job.state() == v1::JOB_STATE_STARTING ||
         job.state() == v1::JOB_STATE_QUEUED;
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

std::string PartsHeader(const MultinodeJob& job) {
  std::string nodes;
  for (const std::string& n : job.nodes) nodes += (nodes.empty() ? "" : ",") + n;
  return "multi-node job " + job.name + ": " + std::to_string(job.nodes.size()) + " parts on " + nodes +
         ", rendezvous " + job.rdzv_endpoint + " id " + job.rdzv_id + "\n";
}

// Stops the parts still running (grace each), at once.
void StopRunningParts(NodePool& pool, const std::string& name, const std::vector<bool>& which,
                 std::chrono::milliseconds grace) {
  pool.AskAll(64, [&](size_t i, AgentClient& agent) -> Status {
    if (!which[i]) return Status::Ok();
    return agent.StopJob(name, grace).status();
  });
}

void FinishParts(CommandContext& ctx, const std::vector<PartReply>& parts) {
  std::vector<NodeAnswer> answers;
  for (const PartReply& p : parts) answers.push_back(p.answer);
  if (FanOutExitCode(answers) != kExitOk) ctx.exit_code = kExitSomeNodesUnreached;
}

}  // namespace gpuctl::client
