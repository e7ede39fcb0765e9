// Reaching a node's agent by name: the node comes from nodes.json, the agent
// is reached through an SSH channel forwarded to its unix socket (it listens
// on nothing public), and, when asked, bootstrapped first.
#pragma once

#include <chrono>
#include <memory>
#include <string>

#include "client/agent_client.h"
#include "client/node/node_store.h"
#include "common/status.h"

namespace gpuctl::client {

struct CommandContext;

struct NodeConnectOptions {
  // Upload and start (or replace) the agent when it is missing or of another build.
  bool bootstrap = false;
  // Bounds the SSH connection (rounded up to seconds) and each call on the client.
  std::chrono::milliseconds timeout = std::chrono::seconds(10);
};

// A client for NAME's agent. The returned client owns the SSH connection and
// the forwarded socket; both close with it. Errors: kNotFound (no such node,
// with `gpuctl node add` as the fix), kUnavailable (SSH or agent unreachable),
// kPermissionDenied (host key or authentication refused).
Result<std::unique_ptr<AgentClient>> ConnectNode(const CommandContext& context, const std::string& name,
                                                 const NodeConnectOptions& options);
// The same for a node already read from nodes.json (the fan-out reads it once).
Result<std::unique_ptr<AgentClient>> ConnectNodeAgent(const CommandContext& context, const Node& node,
                                                      const NodeConnectOptions& options);

}  // namespace gpuctl::client
