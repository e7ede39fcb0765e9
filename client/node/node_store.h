// The nodes a user has named: `gpuctl node add/list/rm`, kept in
// $XDG_CONFIG_HOME/gpuctl/nodes.json (default ~/.config/gpuctl/nodes.json).
// Pure file I/O, no SSH: written atomically so a crash never loses the list.
#pragma once

#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "common/status.h"

namespace gpuctl::client {

struct Node {
  std::string name;
  std::string user;           // empty: from ~/.ssh/config, else the local user
  std::string host;           // address or ~/.ssh/config Host alias
  std::optional<int> port;    // empty: from ~/.ssh/config, else 22
  std::string identity_file;  // empty: ssh-agent, then ~/.ssh/config and default keys
  std::optional<int> container_vmid;  // Proxmox LXC guest on that host
  // Where `gpuctl node bootstrap --prefix` installed the agent; empty: the
  // system install (/usr/local/bin, /etc/gpuctl, /run/gpuctl/gpuctld.sock).
  // The agent's socket, binary and config are found from it (AgentLayoutFor).
  std::string agent_prefix;
  // `node add --label K=V`: what `--nodes @K=V` selects by.
  std::map<std::string, std::string> labels;

  bool operator==(const Node&) const = default;
};

// "[USER@]ADDR[:PORT]"; IPv6 as "[::1]:2222". Errors: kInvalidArgument.
Result<Node> ParseNodeTarget(const std::string& name, const std::string& target);
// "user@host:port" as a user would type it back.
std::string FormatNodeTarget(const Node& node);
// Letters, digits, '-', '_', '.'; 1..64 characters; not "local".
Status ValidateNodeName(const std::string& name);
// "K=V" (or "K" alone: an empty value). K: letters, digits, '-', '_', '.',
// '/'; 1..63 characters. V: printable ASCII without ',', up to 255.
// Errors: kInvalidArgument.
Result<std::pair<std::string, std::string>> ParseNodeLabel(const std::string& text);

// The nodes file's text, and back; pure (NodeStore reads and writes the
// file). `path` only names the file in errors: kInvalidArgument for text
// that is not a gpuctl nodes file.
Result<std::vector<Node>> ParseNodesFile(std::string_view text, const std::string& path);
std::string FormatNodesFile(const std::vector<Node>& nodes);

// $XDG_CONFIG_HOME/gpuctl/nodes.json, else $HOME/.config/gpuctl/nodes.json.
std::string DefaultNodesPath(const std::string& xdg_config_home, const std::string& home);

class NodeStore {
 public:
  explicit NodeStore(std::string path) : path_(std::move(path)) {}
  const std::string& path() const { return path_; }

  // A missing file is an empty list; a corrupt one is an error naming the file.
  Result<std::vector<Node>> List() const;
  // Errors: kNotFound naming `gpuctl node add NAME --host ...` as the fix.
  Result<Node> Find(const std::string& name) const;
  // Errors: kAlreadyExists unless replace.
  Status Add(const Node& node, bool replace = false);
  // Errors: kNotFound.
  Status Remove(const std::string& name);

 private:
  Status Save(const std::vector<Node>& nodes) const;
  std::string path_;
};

// The store at DefaultNodesPath($XDG_CONFIG_HOME, $HOME).
NodeStore DefaultNodeStore();

}  // namespace gpuctl::client
