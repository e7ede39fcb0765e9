#include "client/commands/node_command.h"

#include <memory>
#include <ostream>

#include <nlohmann/json.hpp>

#include "agents/sys/files.h"
#include "agents/sys/paths.h"
#include "client/commands/command_context.h"
#include "client/node/node_store.h"
#include "client/output/table.h"
#include "common/json_text.h"

namespace gpuctl::client {
namespace {

struct NodeAddFlags {
  std::string name;
  std::string host;
  std::string identity;
  int container = 0;
  std::vector<std::string> labels;
  bool replace = false;
};

// "gpu=h200,rack=2", or "-".
std::string LabelsText(const Node& node) {
  std::string out;
  for (const auto& [key, value] : node.labels) out += (out.empty() ? "" : ",") + key + (value.empty() ? "" : "=" + value);
  return out.empty() ? "-" : out;
}

nlohmann::json NodeToJson(const Node& node) {
  return {{"name", node.name},
          {"user", node.user.empty() ? nlohmann::json(nullptr) : nlohmann::json(node.user)},
          {"host", node.host},
          {"port", node.port ? nlohmann::json(*node.port) : nlohmann::json(nullptr)},
          {"identity_file", node.identity_file.empty() ? nlohmann::json(nullptr) : nlohmann::json(node.identity_file)},
          {"container", node.container_vmid ? nlohmann::json(*node.container_vmid) : nlohmann::json(nullptr)},
          {"agent_prefix", node.agent_prefix.empty() ? nlohmann::json(nullptr) : nlohmann::json(node.agent_prefix)},
          {"labels", node.labels},
          {"target", FormatNodeTarget(node)}};
}

void RunAdd(CommandContext& ctx, const NodeAddFlags& flags) {
  if (Status s = ValidateNodeName(flags.name); !s.ok()) return ctx.Fail(s);
  Result<Node> node = ParseNodeTarget(flags.name, flags.host);
  if (!node.ok()) return ctx.Fail(node.status());
  if (!flags.identity.empty()) {
    Result<std::string> absolute = sys::AbsolutePath(flags.identity);
    if (!absolute.ok() || !sys::IsRegularFile(*absolute)) {
      return ctx.Fail(InvalidArgument("identity file " + flags.identity + " is not a readable file"));
    }
    node->identity_file = *absolute;  // the store outlives the current directory
  }
  if (flags.container != 0) node->container_vmid = flags.container;
  for (const std::string& text : flags.labels) {
    Result<std::pair<std::string, std::string>> label = ParseNodeLabel(text);
    if (!label.ok()) return ctx.Fail(label.status());
    node->labels[label->first] = label->second;
  }
  NodeStore store = DefaultNodeStore();
  // Replacing a node's key or user leaves its agent where it was installed.
  if (Result<Node> old = store.Find(node->name); old.ok() && old->host == node->host && old->port == node->port) {
    node->agent_prefix = old->agent_prefix;
  }
  if (Status s = store.Add(*node, flags.replace); !s.ok()) return ctx.Fail(s);
  if (ctx.global.format() == OutputFormat::kJson) {
    ctx.console.out << DumpJson(NodeToJson(*node), -1) << "\n";
  } else {
    ctx.console.out << "added node " << node->name << " (" << FormatNodeTarget(*node) << ") to " << store.path()
                    << "\n";
  }
}

void RunList(CommandContext& ctx) {
  NodeStore store = DefaultNodeStore();
  Result<std::vector<Node>> nodes = store.List();
  if (!nodes.ok()) return ctx.Fail(nodes.status());
  if (ctx.global.format() == OutputFormat::kJson) {
    nlohmann::json list = nlohmann::json::array();
    for (const Node& node : *nodes) list.push_back(NodeToJson(node));
    ctx.console.out << DumpJson(nlohmann::json{{"nodes", list}}, -1) << "\n";
    return;
  }
  if (nodes->empty()) {
    ctx.console.out << "no nodes yet; add one with: gpuctl node add NAME --host [USER@]ADDR[:PORT]\n";
    return;
  }
  Table table({"NAME", "TARGET", "IDENTITY", "CONTAINER", "AGENT", "LABELS"});
  for (const Node& node : *nodes) {
    table.AddRow({node.name, FormatNodeTarget(node), node.identity_file.empty() ? "-" : node.identity_file,
                  node.container_vmid ? std::to_string(*node.container_vmid) : "-",
                  node.agent_prefix.empty() ? "system" : node.agent_prefix, LabelsText(node)});
  }
  ctx.console.out << table.Render();
}

void RunRemove(CommandContext& ctx, const std::string& name) {
  NodeStore store = DefaultNodeStore();
  if (Status s = store.Remove(name); !s.ok()) return ctx.Fail(s);
  if (ctx.global.format() == OutputFormat::kJson) {
    ctx.console.out << DumpJson(nlohmann::json{{"removed", name}}, -1) << "\n";
  } else {
    ctx.console.out << "removed node " << name << "\n";
  }
}

}  // namespace

void AddNodeCommand(CLI::App& app, CommandContext& context) {
  CLI::App* node = app.add_subcommand(
      "node",
      "Named GPU hosts reached over SSH, kept in $XDG_CONFIG_HOME/gpuctl/nodes.json "
      "(default ~/.config/gpuctl/nodes.json). Use them with --node NAME, `provision node NAME`, or many at once "
      "with --nodes all|NAME,NAME|@LABEL.");
  node->require_subcommand(1);

  auto add_flags = std::make_shared<NodeAddFlags>();
  CLI::App* add = node->add_subcommand("add", "Name a host: gpuctl node add gpu1 --host root@10.0.0.5[:22]");
  add->add_option("name", add_flags->name, "Node name (letters, digits, - _ .)")->required();
  add->add_option("--host", add_flags->host, "[USER@]ADDR[:PORT] or a ~/.ssh/config Host alias")->required();
  add->add_option("--identity", add_flags->identity, "Private key file (default: ssh-agent, then ~/.ssh keys)");
  add->add_option("--container", add_flags->container, "Proxmox LXC container VMID on that host")
      ->check(CLI::Range(100, 999999999));
  add->add_option("--label", add_flags->labels,
                  "Label the node KEY=VALUE (repeatable); select labelled nodes with --nodes @KEY=VALUE")
      ->type_name("K=V");
  add->add_flag("--replace", add_flags->replace, "Replace a node of the same name");
  add->callback([&context, add_flags] { RunAdd(context, *add_flags); });

  CLI::App* list = node->add_subcommand("list", "Show the named nodes");
  list->callback([&context] { RunList(context); });

  auto rm_name = std::make_shared<std::string>();
  CLI::App* rm = node->add_subcommand("rm", "Forget a node (nothing on the host is touched)");
  rm->add_option("name", *rm_name, "Node name")->required();
  rm->callback([&context, rm_name] { RunRemove(context, *rm_name); });
}

}  // namespace gpuctl::client
