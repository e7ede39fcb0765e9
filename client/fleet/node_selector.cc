#include "client/fleet/node_selector.h"

#include <algorithm>
#include <set>

namespace gpuctl::client {
std::vector<std::string> SplitNodeList(const std::string& text) {
  std::vector<std::string> parts;
  size_t start = 0;
  while (true) {
    size_t comma = text.find(',', start);
    parts.push_back(text.substr(start, comma - start));
    if (comma == std::string::npos) return parts;
    start = comma + 1;
  }
}

namespace {

bool HasLabel(const Node& node, const std::string& key, const std::string* value) {
  auto it = node.labels.find(key);
  return it != node.labels.end() && (value == nullptr || it->second == *value);
}

}  // namespace

Result<std::vector<Node>> SelectNodes(const std::vector<Node>& known, const std::string& selector) {
  if (known.empty()) {
    return Status(ErrorCode::kNotFound, "no nodes yet; add them with: gpuctl node add NAME --host [USER@]ADDR[:PORT]");
  }
  std::set<std::string> chosen;
  for (const std::string& part : SplitNodeList(selector)) {
    if (part.empty()) return InvalidArgument("--nodes '" + selector + "' has an empty part; give all, NAME,NAME or @KEY=VALUE");
    if (part == "all") {
      for (const Node& node : known) chosen.insert(node.name);
    } else if (part.front() == '@') {
      size_t eq = part.find('=');
      std::string key = part.substr(1, eq == std::string::npos ? std::string::npos : eq - 1);
      std::string value = eq == std::string::npos ? "" : part.substr(eq + 1);
      const std::string* wanted = eq == std::string::npos ? nullptr : &value;
      bool any = false;
      for (const Node& node : known) {
        if (HasLabel(node, key, wanted)) {
          chosen.insert(node.name);
          any = true;
        }
      }
      if (!any) {
        return Status(ErrorCode::kInvalidArgument, "no node has the label " + part.substr(1) +
                                                "; label one with: gpuctl node add NAME --host ... --label " +
                                                part.substr(1) + " --replace");
      }
    } else {
      bool exists = std::any_of(known.begin(), known.end(), [&](const Node& n) { return n.name == part; });
      if (!exists) {
        return Status(ErrorCode::kInvalidArgument,
                      "no node named '" + part + "'; see gpuctl node list, or add it with: gpuctl node add " + part +
                          " --host [USER@]ADDR[:PORT]");
      }
      chosen.insert(part);
    }
  }
  std::vector<Node> selected;
  for (const Node& node : known) {
    if (chosen.count(node.name)) selected.push_back(node);
  }
  return selected;
}

}  // namespace gpuctl::client
