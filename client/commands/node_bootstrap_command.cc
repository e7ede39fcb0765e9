#include "client/commands/node_bootstrap_command.h"

#include <memory>
#include <ostream>

#include <nlohmann/json.hpp>

#include "client/commands/command_context.h"
#include "client/node/bootstrap.h"
#include "client/node/node_ssh.h"
#include "client/ssh/ssh_session.h"
#include "common/json_text.h"
#include "common/utf8.h"

namespace gpuctl::client {
namespace {

struct NodeBootstrapFlags {
  std::string name;
  std::string prefix;
  std::string gpuctld;
  std::string agent_config;
  int timeout_s = 20;
  bool no_install = false;
};

void RunBootstrap(CommandContext& ctx, const NodeBootstrapFlags& flags) {
  Result<Node> node = FindNode(flags.name);
  if (!node.ok()) return ctx.Fail(node.status());
  // A prefix given once is remembered: --node NAME finds the agent there.
  std::string prefix = flags.prefix.empty() ? node->agent_prefix : flags.prefix;
  Result<AgentLayout> layout = AgentLayoutFor(prefix);
  if (!layout.ok()) return ctx.Fail(layout.status());
  Result<std::shared_ptr<ssh::SshSession>> session = ConnectNodeSsh(*node, ctx.global.accept_new_host_key);
  if (!session.ok()) return ctx.Fail(session.status());
  BootstrapOptions options{.layout = *layout,
                           .gpuctld_path = flags.gpuctld,
                           .agent_config = flags.agent_config,
                           .answer_deadline = std::chrono::seconds(flags.timeout_s),
                           .install_missing = !flags.no_install};
  Result<BootstrapResult> booted = BootstrapAgent(*session, options, ctx.console.err);
  if (!booted.ok()) return ctx.Fail(booted.status());
  if (layout->prefix != node->agent_prefix) {
    node->agent_prefix = layout->prefix;
    if (Status s = DefaultNodeStore().Add(*node, /*replace=*/true); !s.ok()) return ctx.Fail(s);
  }
  if (ctx.global.format() == OutputFormat::kJson) {
    ctx.console.out << DumpJson(nlohmann::json{{"node", node->name},     {"build", booted->build},
                                      {"changed", booted->changed}, {"pid", booted->pid},
                                      {"socket", layout->socket}, {"prefix", layout->prefix},
                                      {"replaced_build", booted->replaced_build}}, -1)
                    << "\n";
  } else {
    // The builds are what the node's gpuctld said it is.
    ctx.console.out << "node " << node->name << ": gpuctld build " << EscapeForTerminal(booted->build)
                    << (booted->changed ? " started" : " already running") << " (pid " << booted->pid << ", "
                    << layout->socket << ")"
                    << (booted->replaced_build.empty() ? ""
                                                       : "; replaced build " + EscapeForTerminal(booted->replaced_build))
                    << "\n";
  }
}

}  // namespace

void AddNodeBootstrapCommand(CLI::App& node_command, CommandContext& context) {
  auto flags = std::make_shared<NodeBootstrapFlags>();
  CLI::App* cmd = node_command.add_subcommand(
      "bootstrap",
      "Install or update gpuctld on a node over SSH and start it (systemd where it runs, else detached with a "
      "pidfile); a no-op when the node already runs this build. Checks first that the node can run it (CPU "
      "architecture, glibc 2.34 or newer) and installs tmux there when it is missing");
  cmd->add_option("name", flags->name, "Node name (gpuctl node add)")->required();
  cmd->add_option("--prefix", flags->prefix,
                  "Install under this directory (bin/, etc/, state/, run/, log/) instead of /usr/local/bin and "
                  "/etc/gpuctl; remembered for the node");
  cmd->add_option("--gpuctld", flags->gpuctld, "The gpuctld binary to install (default: the one beside gpuctl)");
  cmd->add_option("--agent-config", flags->agent_config,
                  "Agent config file to install (default deploy/gpuctld.json, only where the node has none)");
  cmd->add_flag("--no-install", flags->no_install,
                "Do not install missing run-time packages (tmux) on the node; refuse and print the command instead");
  cmd->add_option("--timeout", flags->timeout_s, "Seconds to wait for the agent to answer")
      ->check(CLI::Range(1, 600))
      ->capture_default_str();
  cmd->callback([&context, flags] { RunBootstrap(context, *flags); });
}

}  // namespace gpuctl::client
