// The `--nodes` form of a command: read nodes.json, select, ask every node
// at once and keep each answer (or error) in node order.
#pragma once

#include <functional>
#include <memory>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "client/fleet/fan_out.h"
#include "client/output/fleet_text.h"
#include "common/status.h"

namespace gpuctl::client {

struct CommandContext;

// The selected nodes, ready to be asked. Errors: kInvalidArgument (a bad
// selector or timeout, --node given too), kNotFound (see SelectNodes).
struct Fleet {
  FanOutOptions options;
  std::unique_ptr<NodePool> pool;
};
Result<Fleet> OpenFleet(const CommandContext& context);

template <typename Answer>
struct FleetReplies {
  std::vector<Node> nodes;
  std::vector<Answer> answers;      // valid where status[i].status is ok
  std::vector<NodeAnswer> status;

  std::vector<NodeRow<Answer>> Rows() const {
    std::vector<NodeRow<Answer>> rows;
    for (size_t i = 0; i < nodes.size(); ++i) {
      bool ok = status[i].status.ok();
      rows.push_back({nodes[i].name, ok ? &answers[i] : nullptr, ok ? "" : status[i].status.message()});
    }
    return rows;
  }
};

// ask(client) on every node of the fleet, at most --concurrency at once.
template <typename Answer>
FleetReplies<Answer> AskFleet(Fleet& fleet, const std::function<Result<Answer>(AgentClient&)>& ask) {
  FleetReplies<Answer> replies;
  replies.nodes = fleet.pool->nodes();
  replies.answers.resize(replies.nodes.size());
  replies.status = fleet.pool->AskAll(fleet.options.concurrency, [&](size_t i, AgentClient& client) {
    Result<Answer> answer = ask(client);
    if (!answer.ok()) return answer.status();
    replies.answers[i] = std::move(*answer);
    return Status::Ok();
  });
  return replies;
}

// {"node": NAME, "error": MESSAGE, "reached": false|true}: a JSON line for a
// node that did not answer.
nlohmann::json NodeErrorJson(const std::string& node, const NodeAnswer& answer);

// Writes one JSON line per node: `to_json(i)` for those that answered, the
// error line for the others, "node" added to each.
void PrintFleetJsonLines(CommandContext& context, const std::vector<Node>& nodes,
                         const std::vector<NodeAnswer>& status, const std::function<nlohmann::json(size_t)>& to_json);

// The command's exit code: 4 when some node was not reached; when every node
// answered with an error, that error's code; else 0.
void FinishFleet(CommandContext& context, const std::vector<NodeAnswer>& status);

}  // namespace gpuctl::client
