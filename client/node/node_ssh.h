// From a Node in nodes.json to an SSH session: the user's ~/.ssh (config,
// known_hosts, keys) as found through $HOME.
#pragma once

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
Result<std::shared_ptr<ssh::SshSession>> ConnectNodeSsh(const Node& node, bool accept_new_host_key);

}  // namespace gpuctl::client
