#include "client/node/agent_config.h"

#include <cstdint>
#include <cstdio>
#include "common/json_text.h"

#include <nlohmann/json.hpp>

namespace gpuctl::client {

std::string TmuxSocketForPrefix(const std::string& prefix) {
  uint32_t hash = 2166136261u;  // FNV-1a: stable across builds and hosts
  for (char c : prefix) hash = (hash ^ static_cast<unsigned char>(c)) * 16777619u;
  char name[32];
  std::snprintf(name, sizeof name, "gpuctl-%08x", hash);
  return name;
}

Result<std::string> AgentConfigFor(const std::string& base_json, const AgentLayout& layout) {
  nlohmann::json config;
  try {
    config = nlohmann::json::parse(base_json);
  } catch (const nlohmann::json::exception& e) {
    return InvalidArgument(std::string("the agent config is not valid JSON: ") + e.what());
  }
  if (!config.is_object()) return InvalidArgument("the agent config must be a JSON object");
  // Loopback TCP listeners are kept; unix sockets are replaced by the one
  // the node is reached on (a prefix install must not take the system's).
  nlohmann::json listen = nlohmann::json::array({"unix:" + layout.socket});
  if (config.contains("listen") && config["listen"].is_array()) {
    for (const auto& address : config["listen"]) {
      if (address.is_string() && address.get<std::string>().rfind("unix:", 0) != 0) listen.push_back(address);
    }
  }
  config["listen"] = listen;
  if (!layout.system()) {
    config["state_dir"] = layout.state_dir;
    // Its own tmux server too: a tmux server is shared by name across the
    // host, so a second agent would start its jobs in the first one's server
    // (with that agent's namespaces, environment and cgroup).
    if (!config.contains("tmux_socket")) config["tmux_socket"] = TmuxSocketForPrefix(layout.prefix);
  }
  return DumpJson(config, 2) + "\n";
}

}  // namespace gpuctl::client
