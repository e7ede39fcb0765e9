#include "client/node/agent_config.h"
#include "common/json_text.h"

#include <nlohmann/json.hpp>

namespace gpuctl::client {

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
  if (!layout.system()) config["state_dir"] = layout.state_dir;
  return DumpJson(config, 2) + "\n";
}

}  // namespace gpuctl::client
