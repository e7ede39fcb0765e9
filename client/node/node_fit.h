// Whether a node can run a gpuctld binary, decided from what the binary
// needs (its ELF file) and what the node's probe found, before anything is
// uploaded. The messages name what is needed and what the node has.
#pragma once

#include <string>

#include "client/node/binary_requirements.h"
#include "client/node/remote_agent_commands.h"
#include "common/status.h"

namespace gpuctl::client {

// Errors: kFailedPrecondition when the architecture differs, the node has no
// glibc or an older one than the binary needs, or the binary needs shared
// libraries beyond glibc (a non-portable build).
Status CheckNodeCanRun(const BinaryRequirements& needs, const RemoteAgentState& node, const std::string& node_name);

}  // namespace gpuctl::client
