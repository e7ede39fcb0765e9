// Asking many nodes at once: each selected node's agent is reached over SSH
// (one connection per node, kept for the whole command and reused by every
// call on it), at most `concurrency` nodes at a time, each under its own
// timeout. A node that cannot be reached is an answer too, never the end of
// the command.
#pragma once

#include <chrono>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "client/agent_client.h"
#include "client/node/node_store.h"
#include "common/status.h"

namespace gpuctl::client {

struct CommandContext;

struct FanOutOptions {
  int concurrency = 16;
  // Bounds the SSH connection and each call to a node's agent.
  std::chrono::milliseconds timeout = std::chrono::seconds(20);
};

// What one node said: `status` is its error, if any; `reached` is false when
// its agent could not be reached (no SSH, no agent, a timeout), which is
// what exit code 4 reports.
struct NodeAnswer {
  Status status;
  bool reached = true;
};

// Runs work(i) for each i in [0, count), at most `concurrency` at once, and
// returns when all are done.
void RunBounded(size_t count, int concurrency, const std::function<void(size_t)>& work);

// The selected nodes' agents. Connects to each on first use and keeps the
// connection until the pool goes; a call that finds the agent gone drops it,
// so the next use reconnects (top's refreshes). One thread per node at a time.
class NodePool {
 public:
  using Connect = std::function<Result<std::unique_ptr<AgentClient>>(const Node&)>;
  NodePool(std::vector<Node> nodes, Connect connect);
  // Reaches `context`'s nodes as `--node` would, under options.timeout.
  static NodePool ForCommand(const CommandContext& context, std::vector<Node> nodes, const FanOutOptions& options);

  const std::vector<Node>& nodes() const { return nodes_; }
  size_t size() const { return nodes_.size(); }

  // Calls ask(client) on node i's agent, connecting first if need be.
  NodeAnswer Ask(size_t i, const std::function<Status(AgentClient&)>& ask);
  // Ask on every node at once (bounded by `concurrency`), answers in node order.
  std::vector<NodeAnswer> AskAll(int concurrency, const std::function<Status(size_t, AgentClient&)>& ask);

 private:
  std::vector<Node> nodes_;
  Connect connect_;
  std::vector<std::unique_ptr<AgentClient>> clients_;
};

// 0 when every node was reached, else 4 (kExitSomeNodesUnreached); a node
// that answered with an error keeps the usual codes only when it is alone.
int FanOutExitCode(const std::vector<NodeAnswer>& answers);

}  // namespace gpuctl::client
