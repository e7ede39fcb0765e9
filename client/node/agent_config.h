// The config file a bootstrapped agent gets: deploy/gpuctld.json (or the
// user's own file) with the layout's socket and, for a prefix install, its
// state directory and tmux server, so the agent listens exactly where the
// node is reached and shares nothing with another install on the host.
#pragma once

#include <string>

#include "client/node/agent_layout.h"
#include "common/status.h"

namespace gpuctl::client {

// Errors: kInvalidArgument when `base_json` is not a JSON object.
Result<std::string> AgentConfigFor(const std::string& base_json, const AgentLayout& layout);

// "gpuctl-<8 hex digits of a hash of PREFIX>": a prefix install's tmux socket name.
std::string TmuxSocketForPrefix(const std::string& prefix);

}  // namespace gpuctl::client
