// An AgentClient that dials the agent's unix socket on a node through an
// SSH tunnel; the client owns the tunnel (and through it the session).
#pragma once

#include <chrono>
#include <memory>
#include <string>

#include "client/agent_client.h"
#include "common/status.h"

namespace gpuctl::client {

namespace ssh {
class SshSession;
}

// `remote_gpuctld`: the node's gpuctld, run as `--bridge SOCKET` where the
// SSH server will not forward to the socket itself; empty: no fallback.
// Errors: kUnavailable when the remote socket cannot be reached.
Result<std::unique_ptr<AgentClient>> AgentClientOverSsh(
    std::shared_ptr<ssh::SshSession> session, const std::string& remote_socket,
    std::chrono::milliseconds call_timeout = std::chrono::seconds(10), const std::string& remote_gpuctld = "");

}  // namespace gpuctl::client
