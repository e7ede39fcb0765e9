#include "client/node/node_store.h"

#include <algorithm>
#include <charconv>
#include <string_view>

#include <nlohmann/json.hpp>

#include "agents/sys/environment.h"
#include "agents/sys/files.h"
#include "agents/sys/paths.h"
#include "common/json_integer.h"
#include "common/json_text.h"

namespace gpuctl::client {
namespace {

constexpr int kFormatVersion = 1;

Result<int> ParsePort(const std::string& text, const std::string& target) {
  int port = 0;
  auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), port);
  if (ec != std::errc() || end != text.data() + text.size() || port < 1 || port > 65535) {
    return InvalidArgument("bad port '" + text + "' in '" + target + "': give 1-65535");
  }
  return port;
}

nlohmann::json ToJson(const Node& node) {
  nlohmann::json j{{"name", node.name}, {"host", node.host}};
  if (!node.user.empty()) j["user"] = node.user;
  if (node.port) j["port"] = *node.port;
  if (!node.identity_file.empty()) j["identity_file"] = node.identity_file;
  if (node.container_vmid) j["container"] = *node.container_vmid;
  if (!node.agent_prefix.empty()) j["agent_prefix"] = node.agent_prefix;
  if (!node.labels.empty()) j["labels"] = node.labels;
  return j;
}

Node FromJson(const nlohmann::json& j) {
  Node node;
  node.name = j.at("name").get<std::string>();
  node.host = j.at("host").get<std::string>();
  node.user = j.value("user", "");
  if (j.contains("port")) node.port = JsonInteger<int>(j.at("port"));
  node.identity_file = j.value("identity_file", "");
  if (j.contains("container")) node.container_vmid = JsonInteger<int>(j.at("container"));
  node.agent_prefix = j.value("agent_prefix", "");
  if (j.contains("labels")) {
    for (const auto& [key, value] : j.at("labels").items()) node.labels[key] = value.get<std::string>();
  }
  return node;
}

}  // namespace

Status ValidateNodeName(const std::string& name) {
  bool ok_chars = std::all_of(name.begin(), name.end(), [](char c) {
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '-' || c == '_' ||
           c == '.';
  });
  if (name.empty() || name.size() > 64 || !ok_chars || name.front() == '-' || name.front() == '.') {
    return InvalidArgument("bad node name '" + name +
                           "': use 1-64 letters, digits, '-', '_' or '.', not starting with '-' or '.'");
  }
  // "local" means this machine's agent wherever a node name is taken.
  if (name == "local") return InvalidArgument("'local' is reserved for this machine's agent; pick another name");
  // "all" means every node in --nodes: a node of that name could never be picked alone.
  if (name == "all") return InvalidArgument("'all' is reserved: --nodes all means every node; pick another name");
  return Status::Ok();
}

Result<std::pair<std::string, std::string>> ParseNodeLabel(const std::string& text) {
  size_t eq = text.find('=');
  if (eq == std::string::npos) {
    return InvalidArgument("bad label '" + text + "': give KEY=VALUE (KEY= for an empty value)");
  }
  std::string key = text.substr(0, eq);
  std::string value = eq == std::string::npos ? "" : text.substr(eq + 1);
  bool key_ok = !key.empty() && key.size() <= 63 && std::all_of(key.begin(), key.end(), [](char c) {
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '-' || c == '_' ||
           c == '.' || c == '/';
  });
  if (!key_ok) {
    return InvalidArgument("bad label '" + text + "': give KEY=VALUE, KEY of 1-63 letters, digits, '-', '_', '.', '/'");
  }
  bool value_ok = value.size() <= 255 && std::all_of(value.begin(), value.end(), [](char c) {
    return c > ' ' && c < 0x7f && c != ',';
  });
  if (!value_ok) {
    return InvalidArgument("bad label value in '" + text + "': up to 255 printable characters, no spaces or ','");
  }
  return std::make_pair(key, value);
}

Result<Node> ParseNodeTarget(const std::string& name, const std::string& target) {
  Node node;
  node.name = name;
  std::string rest = target;
  if (size_t at = rest.rfind('@'); at != std::string::npos) {
    node.user = rest.substr(0, at);
    rest = rest.substr(at + 1);
    if (node.user.empty()) return InvalidArgument("empty user in '" + target + "'");
    // A login name: letters, digits and . _ - (with @ and \ for directory
    // accounts, $ for machine accounts); it reaches ssh and remote shells.
    bool user_ok = node.user.size() <= 64 && node.user.front() != '-' &&
                   std::all_of(node.user.begin(), node.user.end(), [](char c) {
                     return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
                            std::string_view("._-@\\$").find(c) != std::string_view::npos;
                   });
    if (!user_ok) {
      return InvalidArgument("bad user '" + node.user + "' in '" + target +
                             "': up to 64 letters, digits, '.', '_', '-', '@', '\\' or '$', not starting with '-'");
    }
  }
  if (!rest.empty() && rest.front() == '[') {  // [v6]:port
    size_t close = rest.find(']');
    if (close == std::string::npos) return InvalidArgument("unclosed '[' in '" + target + "'");
    node.host = rest.substr(1, close - 1);
    std::string after = rest.substr(close + 1);
    if (!after.empty()) {
      if (after.front() != ':') return InvalidArgument("expected ':PORT' after ']' in '" + target + "'");
      Result<int> port = ParsePort(after.substr(1), target);
      if (!port.ok()) return port.status();
      node.port = *port;
    }
  } else if (size_t colon = rest.find(':'); colon != std::string::npos) {
    if (rest.find(':', colon + 1) != std::string::npos) {
      return InvalidArgument("'" + target + "' looks like an IPv6 address: write it as [ADDR]:PORT");
    }
    Result<int> port = ParsePort(rest.substr(colon + 1), target);
    if (!port.ok()) return port.status();
    node.port = *port;
    node.host = rest.substr(0, colon);
  } else {
    node.host = rest;
  }
  if (node.host.empty()) return InvalidArgument("no host in '" + target + "': give [USER@]ADDR[:PORT]");
  // A DNS name (at most 253 characters) or an address; a v6 zone after '%'.
  bool host_ok = node.host.size() <= 253 && node.host.front() != '-' &&
                 std::all_of(node.host.begin(), node.host.end(), [](char c) {
                   return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
                          std::string_view(".-_:%").find(c) != std::string_view::npos;
                 });
  if (!host_ok) {
    return InvalidArgument("bad host '" + node.host.substr(0, 64) + (node.host.size() > 64 ? "..." : "") + "' in '" +
                           target.substr(0, 80) + (target.size() > 80 ? "..." : "") +
                           "': a DNS name or address of at most 253 letters, digits, '.', '-', '_' or ':'");
  }
  return node;
}

std::string FormatNodeTarget(const Node& node) {
  std::string out = node.user.empty() ? "" : node.user + "@";
  bool v6 = node.host.find(':') != std::string::npos;
  out += v6 && node.port ? "[" + node.host + "]" : node.host;
  if (node.port) out += ":" + std::to_string(*node.port);
  return out;
}

Result<std::vector<Node>> ParseNodesFile(std::string_view text, const std::string& path) {
  try {
    nlohmann::json j = nlohmann::json::parse(text);
    std::vector<Node> nodes;
    for (const auto& entry : j.at("nodes")) nodes.push_back(FromJson(entry));
    return nodes;
  } catch (const nlohmann::json::exception& e) {
    return Status(ErrorCode::kInvalidArgument,
                  path + " is not a gpuctl nodes file (" + e.what() + "); fix or remove it");
  }
}

std::string FormatNodesFile(const std::vector<Node>& nodes) {
  nlohmann::json list = nlohmann::json::array();
  for (const Node& node : nodes) list.push_back(ToJson(node));
  nlohmann::json doc{{"version", kFormatVersion}, {"nodes", list}};
  return DumpJson(doc, 2) + "\n";
}

std::string DefaultNodesPath(const std::string& xdg_config_home, const std::string& home) {
  std::string base = !xdg_config_home.empty() ? xdg_config_home : home + "/.config";
  return base + "/gpuctl/nodes.json";
}

NodeStore DefaultNodeStore() {
  auto env = [](const char* name) { return sys::EnvironmentVariable(name).value_or(""); };
  return NodeStore(DefaultNodesPath(env("XDG_CONFIG_HOME"), env("HOME")));
}

Result<std::vector<Node>> NodeStore::List() const {
  if (!sys::PathExists(path_)) return std::vector<Node>{};
  Result<std::string> text = sys::ReadWholeFile(path_);
  if (!text.ok()) return text.status();
  return ParseNodesFile(*text, path_);
}

Result<Node> NodeStore::Find(const std::string& name) const {
  Result<std::vector<Node>> nodes = List();
  if (!nodes.ok()) return nodes.status();
  for (const Node& node : *nodes) {
    if (node.name == name) return node;
  }
  return Status(ErrorCode::kNotFound, "no node named '" + name + "' in " + path_ +
                                          "; add it with: gpuctl node add " + name + " --host [USER@]ADDR[:PORT]");
}

Status NodeStore::Add(const Node& node, bool replace) {
  if (Status s = ValidateNodeName(node.name); !s.ok()) return s;
  Result<std::vector<Node>> nodes = List();
  if (!nodes.ok()) return nodes.status();
  auto same = [&](const Node& n) { return n.name == node.name; };
  auto it = std::find_if(nodes->begin(), nodes->end(), same);
  if (it != nodes->end()) {
    if (!replace) {
      return Status(ErrorCode::kAlreadyExists, "node '" + node.name + "' exists (" + FormatNodeTarget(*it) +
                                                   "); remove it first or pass --replace");
    }
    *it = node;
  } else {
    nodes->push_back(node);
  }
  return Save(*nodes);
}

Status NodeStore::Remove(const std::string& name) {
  Result<std::vector<Node>> nodes = List();
  if (!nodes.ok()) return nodes.status();
  auto it = std::find_if(nodes->begin(), nodes->end(), [&](const Node& n) { return n.name == name; });
  if (it == nodes->end()) return Status(ErrorCode::kNotFound, "no node named '" + name + "' in " + path_);
  nodes->erase(it);
  return Save(*nodes);
}

Status NodeStore::Save(const std::vector<Node>& nodes) const {
  std::string dir = sys::ParentDir(path_);
  if (Status s = sys::EnsureDir(dir, 0700); !s.ok()) return s;
  return sys::WriteFileAtomic(path_, FormatNodesFile(nodes), 0600);
}

}  // namespace gpuctl::client
