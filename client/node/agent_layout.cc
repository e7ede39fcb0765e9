#include "client/node/agent_layout.h"

namespace gpuctl::client {

Result<AgentLayout> AgentLayoutFor(const std::string& prefix) {
  if (prefix.empty()) {
    return AgentLayout{.prefix = "",
                       .binary = "/usr/local/bin/gpuctld",
                       .config = "/etc/gpuctl/gpuctld.json",
                       .state_dir = "/var/lib/gpuctl",
                       .socket = "/run/gpuctl/gpuctld.sock",
                       .pidfile = "/run/gpuctl/gpuctld.pid",
                       .log = "/var/log/gpuctld.log"};
  }
  if (prefix.front() != '/' || prefix.find("/..") != std::string::npos) {
    return InvalidArgument("the agent prefix must be an absolute path without '..', got '" + prefix + "'");
  }
  std::string base = prefix.size() > 1 && prefix.back() == '/' ? prefix.substr(0, prefix.size() - 1) : prefix;
  return AgentLayout{.prefix = base,
                     .binary = base + "/bin/gpuctld",
                     .config = base + "/etc/gpuctld.json",
                     .state_dir = base + "/state",
                     .socket = base + "/run/gpuctld.sock",
                     .pidfile = base + "/run/gpuctld.pid",
                     .log = base + "/log/gpuctld.log"};
}

}  // namespace gpuctl::client
