#include "client/node/node_connect.h"

#include "client/commands/command_context.h"

namespace gpuctl::client {

// Placeholder until the SSH layer lands (issue 5): says so instead of pretending.
Result<std::unique_ptr<AgentClient>> ConnectNode(const CommandContext&, const std::string& name,
                                                 const NodeConnectOptions&) {
  return Status(ErrorCode::kFailedPrecondition, "reaching node '" + name + "' over SSH is not built yet");
}

}  // namespace gpuctl::client
