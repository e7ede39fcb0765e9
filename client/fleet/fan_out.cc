#include "client/fleet/fan_out.h"

#include <algorithm>
#include <atomic>
#include <thread>

#include "client/commands/command_context.h"
#include "client/exit_codes.h"
#include "client/node/node_connect.h"

namespace gpuctl::client {

void RunBounded(size_t count, int concurrency, const std::function<void(size_t)>& work) {
  size_t threads = std::min(count, static_cast<size_t>(std::max(1, concurrency)));
  std::atomic<size_t> next{0};
  auto worker = [&] {
    for (size_t i = next++; i < count; i = next++) work(i);
  };
  std::vector<std::thread> pool;
  for (size_t t = 1; t < threads; ++t) pool.emplace_back(worker);
  if (count > 0) worker();  // this thread is one of them
  for (std::thread& thread : pool) thread.join();
}

NodePool::NodePool(std::vector<Node> nodes, Connect connect)
    : nodes_(std::move(nodes)), connect_(std::move(connect)), clients_(nodes_.size()) {}

NodePool NodePool::ForCommand(const CommandContext& context, std::vector<Node> nodes, const FanOutOptions& options) {
  NodeConnectOptions connect_options;
  connect_options.timeout = options.timeout;
  return NodePool(std::move(nodes), [&context, connect_options](const Node& node) {
    return ConnectNodeAgent(context, node, connect_options);
  });
}

NodeAnswer NodePool::Ask(size_t i, const std::function<Status(AgentClient&)>& ask) {
  if (!clients_[i]) {
    Result<std::unique_ptr<AgentClient>> client = connect_(nodes_[i]);
    if (!client.ok()) return {client.status(), false};
    clients_[i] = std::move(*client);
  }
  Status status = ask(*clients_[i]);
  // kUnavailable: the agent or the tunnel went away (or the call timed out).
  bool reached = status.code() != ErrorCode::kUnavailable;
  if (!reached) clients_[i].reset();
  return {std::move(status), reached};
}

std::vector<NodeAnswer> NodePool::AskAll(int concurrency, const std::function<Status(size_t, AgentClient&)>& ask) {
  std::vector<NodeAnswer> answers(nodes_.size());
  RunBounded(nodes_.size(), concurrency, [&](size_t i) {
    answers[i] = Ask(i, [&](AgentClient& client) { return ask(i, client); });
  });
  return answers;
}

int FanOutExitCode(const std::vector<NodeAnswer>& answers) {
  bool all_reached = std::all_of(answers.begin(), answers.end(), [](const NodeAnswer& a) { return a.reached; });
  return all_reached ? kExitOk : kExitSomeNodesUnreached;
}

}  // namespace gpuctl::client
