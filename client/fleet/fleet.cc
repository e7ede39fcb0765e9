#include "client/fleet/fleet.h"

#include <algorithm>
#include <ostream>

#include "client/commands/command_context.h"
#include "client/fleet/node_selector.h"
#include "common/json_text.h"
#include "common/units.h"

namespace gpuctl::client {

Result<Fleet> OpenFleet(const CommandContext& context) {
  const GlobalOptions& global = context.global;
  if (!global.node.empty()) return InvalidArgument("give either --node or --nodes, not both");
  if (!global.agent.empty()) return InvalidArgument("give either --agent or --nodes, not both");
  Result<std::chrono::milliseconds> timeout = ParseDuration(global.node_timeout);
  if (!timeout.ok()) return timeout.status().Wrap("--node-timeout");
  if (*timeout < std::chrono::seconds(1) || *timeout > std::chrono::hours(1)) {
    return InvalidArgument("--node-timeout must be from 1s to 1h, got " + global.node_timeout);
  }
  Result<std::vector<Node>> known = DefaultNodeStore().List();
  if (!known.ok()) return known.status();
  Result<std::vector<Node>> selected = SelectNodes(*known, global.nodes);
  if (!selected.ok()) return selected.status();
  Fleet fleet;
  fleet.options.concurrency = global.concurrency;
  fleet.options.timeout = *timeout;
  fleet.pool = std::make_unique<NodePool>(NodePool::ForCommand(context, std::move(*selected), fleet.options));
  return fleet;
}

nlohmann::json NodeErrorJson(const std::string& node, const NodeAnswer& answer) {
  return {{"node", node}, {"error", answer.status.message()}, {"reached", answer.reached}};
}

void PrintFleetJsonLines(CommandContext& context, const std::vector<Node>& nodes,
                         const std::vector<NodeAnswer>& status, const std::function<nlohmann::json(size_t)>& to_json) {
  for (size_t i = 0; i < nodes.size(); ++i) {
    nlohmann::json line = status[i].status.ok() ? to_json(i) : NodeErrorJson(nodes[i].name, status[i]);
    line["node"] = nodes[i].name;
    // Every row says whether its node was reached, the answers' too.
    if (status[i].status.ok()) line["reached"] = true;
    context.console.out << DumpJson(line, -1) << "\n";
  }
  context.console.out.flush();
}

void FinishFleet(CommandContext& context, const std::vector<NodeAnswer>& status) {
  if (FanOutExitCode(status) != kExitOk) {
    context.exit_code = kExitSomeNodesUnreached;
    return;
  }
  bool all_failed = !status.empty() && std::all_of(status.begin(), status.end(), [](const NodeAnswer& a) {
    return !a.status.ok();
  });
  context.exit_code = all_failed ? ExitCodeFor(status.front().status) : kExitOk;
}

}  // namespace gpuctl::client
