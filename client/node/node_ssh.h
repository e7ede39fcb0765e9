// From a Node in nodes.json to an SSH session: the user's ~/.ssh (config,
// known_hosts, keys) as found through $HOME.
#pragma once

#include <chrono>
#include <memory>
#include <string>

#include "client/node/node_store.h"
#include "common/status.h"

namespace gpuctl::client {

namespace ssh {
class SshSession;
}

// The node named `name` in $XDG_CONFIG_HOME/gpuctl/nodes.json (or ~/.config).
Result<Node> FindNode(const std::string& name);

// Errors as SshSession::Connect.
// `timeout` bounds the connection and each blocking step of it.
Result<std::shared_ptr<ssh::SshSession>> ConnectNodeSsh(const Node& node, bool accept_new_host_key,
                                                        std::chrono::seconds timeout = std::chrono::seconds(10));

}  // namespace gpuctl::client
