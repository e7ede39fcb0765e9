// Where the client finds its agent: --agent, else $GPUCTL_AGENT, else the
// default unix socket. Accepts "unix:/path", "/path" (a socket), "HOST:PORT".
#pragma once

#include <string>

#include "common/status.h"

namespace gpuctl::client {

inline constexpr const char* kDefaultAgentAddress = "unix:/run/gpuctl/gpuctld.sock";

// flag_value wins over env_value (either may be empty).
std::string ChooseAgentAddress(const std::string& flag_value, const std::string& env_value);
// A unix socket (unix:PATH or /PATH): the agent on this host, or one an SSH
// tunnel brings here.
bool IsUnixSocketAddress(const std::string& address);
// Normalises to the form gRPC takes; refuses what is neither a socket path nor HOST:PORT.
Result<std::string> NormalizeAgentAddress(const std::string& address);

}  // namespace gpuctl::client
