#include "client/node/node_connect.h"

#include <cstdlib>

#include "client/commands/command_context.h"
#include "client/node/agent_over_ssh.h"
#include "client/node/bootstrap.h"
#include "client/node/node_ssh.h"
#include "client/node/node_store.h"

namespace gpuctl::client {

Result<std::unique_ptr<AgentClient>> ConnectNode(const CommandContext& context, const std::string& name,
                                                 const NodeConnectOptions& options) {
  Result<Node> node = FindNode(name);
  if (!node.ok()) return node.status();
  return ConnectNodeAgent(context, *node, options);
}

Result<std::unique_ptr<AgentClient>> ConnectNodeAgent(const CommandContext& context, const Node& node,
                                                      const NodeConnectOptions& options) {
  const std::string& name = node.name;
  Result<AgentLayout> layout = AgentLayoutFor(node.agent_prefix);
  if (!layout.ok()) return layout.status();
  auto ssh_timeout = std::chrono::ceil<std::chrono::seconds>(options.timeout);
  Result<std::shared_ptr<ssh::SshSession>> session =
      ConnectNodeSsh(node, context.global.accept_new_host_key, ssh_timeout);
  if (!session.ok()) return session.status();
  if (options.bootstrap) {
    BootstrapOptions bootstrap;
    bootstrap.layout = *layout;
    Result<BootstrapResult> booted = BootstrapAgent(*session, bootstrap, context.console.err);
    if (!booted.ok()) return booted.status();
    booted->client->NameNode(name);
    return std::move(booted->client);
  }
  Result<std::unique_ptr<AgentClient>> client =
      AgentClientOverSsh(*session, layout->socket, options.timeout, layout->binary);
  if (!client.ok()) {
    return Status(client.status().code(),
                  client.status().message() + "; install or start it with: gpuctl node bootstrap " + name);
  }
  (*client)->NameNode(name);
  return client;
}

}  // namespace gpuctl::client
