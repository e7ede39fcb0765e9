#include "client/cli.h"

#include <algorithm>
#include <ostream>

#include <CLI/CLI.hpp>

#include "client/commands/build_command.h"
#include "client/commands/command_context.h"
#include "client/commands/completion_command.h"
#include "client/commands/events_command.h"
#include "client/commands/gpu_command.h"
#include "client/commands/health_command.h"
#include "client/commands/node_bootstrap_command.h"
#include "client/commands/node_command.h"
#include "client/commands/probe_command.h"
#include "client/commands/provision_command.h"
#include "client/commands/top_command.h"
#include "client/commands/train_command.h"

namespace gpuctl::client {
namespace {

// The flags every command shares. Declared on the top-level app (for --help
// and completion) and on the first pass's app, which is the one that reads
// them and their environment variables.
void AddGlobalFlags(CLI::App& app, GlobalOptions& global, bool read_environment) {
  auto env = [read_environment](CLI::Option* option, const char* name) {
    if (read_environment) option->envname(name);
    return option;
  };
  app.add_option("--agent", global.agent,
                 "Agent address: unix:PATH or HOST:PORT (default $GPUCTL_AGENT, else unix:/run/gpuctl/gpuctld.sock)");
  env(app.add_option("--node", global.node,
                     "Reach the agent of this node (gpuctl node add) through SSH (default $GPUCTL_NODE)"),
      "GPUCTL_NODE");
  app.add_option("--nodes", global.nodes,
                 "Ask many nodes at once: all, NAME,NAME or @KEY=VALUE (node add --label); works with health, "
                 "top, train list, train status, events and probe. Exit 4 when some nodes could not be reached")
      ->type_name("SELECTOR");
  app.add_option("--concurrency", global.concurrency, "With --nodes: how many nodes to ask at once")
      ->check(CLI::Range(1, 1024))
      ->capture_default_str();
  app.add_option("--node-timeout", global.node_timeout,
                 "With --nodes: how long each node gets to connect, and to answer each call (e.g. 5s)")
      ->capture_default_str();
  app.add_flag("--accept-new-host-key", global.accept_new_host_key,
               "Record an unknown SSH host key in known_hosts instead of refusing it (a changed key is always "
               "refused)");
  env(app.add_option("--tls-ca", global.tls_ca,
                     "PEM CA that signed the agent's certificate; TCP agents need mutual TLS ($GPUCTL_TLS_CA)"),
      "GPUCTL_TLS_CA");
  env(app.add_option("--tls-cert", global.tls_cert,
                     "PEM client certificate signed by the agent's --tls-client-ca ($GPUCTL_TLS_CERT)"),
      "GPUCTL_TLS_CERT");
  env(app.add_option("--tls-key", global.tls_key, "PEM private key of --tls-cert ($GPUCTL_TLS_KEY)"), "GPUCTL_TLS_KEY");
  env(app.add_option("--tls-server-name", global.tls_server_name,
                     "Name to verify in the agent's certificate, when not the address's host ($GPUCTL_TLS_SERVER_NAME)"),
      "GPUCTL_TLS_SERVER_NAME");
  app.add_option("-o,--output", global.output, "Output format: text or json")
      ->check(CLI::IsMember({"text", "json"}))
      ->capture_default_str();
}

int PrintParseError(const CLI::ParseError& e, Console& console) {
  // Subcommand --help surfaces here as a "success" parse error.
  if (e.get_exit_code() == 0) {
    console.out << e.what();
    return kExitOk;
  }
  console.err << "gpuctl: " << e.what() << "\nRun 'gpuctl --help' for usage.\n";
  return kExitUsage;
}

// "gpuctl train" alone: which subcommands there are, one line each, so a
// user sees where to go instead of only that something is missing.
std::string SubcommandList(const CLI::App& command, const std::string& path) {
  std::string out = path + ": a subcommand is required:\n";
  size_t width = 0;
  // Not the hidden ones (__complete, for the completion script).
  auto subs = command.get_subcommands([](const CLI::App* sub) { return sub->get_name().rfind("__", 0) != 0; });
  for (const CLI::App* sub : subs) width = std::max(width, sub->get_name().size());
  for (const CLI::App* sub : subs) {
    std::string description = sub->get_description();
    description = description.substr(0, description.find('\n'));
    out += "  " + sub->get_name() + std::string(width - sub->get_name().size() + 2, ' ') + description + "\n";
  }
  return out + "Run '" + path + " SUBCOMMAND --help' for its flags.\n";
}

// The deepest command the parse reached, and its path ("gpuctl train").
const CLI::App* DeepestCommand(const CLI::App& app, std::string& path) {
  const CLI::App* at = &app;
  path = "gpuctl";
  while (!at->get_subcommands().empty()) {
    at = at->get_subcommands().front();
    path += " " + at->get_name();
  }
  return at;
}

}  // namespace

int RunCli(const std::vector<std::string>& args, Console& console, const std::string& env_agent) {
  CommandContext context{.global = {}, .console = console, .env_agent = env_agent, .args = args};

  // First pass: the global flags, before or after the subcommand (gpuctl
  // provision node n1 --accept-new-host-key), never after "--" (the job's
  // own argv). Everything else is left, in order, for the second pass.
  // (CLI11's fallthrough would do this, but it adds trailing positionals
  // such as train start's command twice.) No subcommand may define a flag
  // of the same name.
  std::vector<std::string> rest;
  {
    CLI::App globals{"", "gpuctl"};
    globals.set_help_flag();
    globals.allow_extras();
    AddGlobalFlags(globals, context.global, /*read_environment=*/true);
    std::vector<std::string> reversed(args.rbegin(), args.rend());
    try {
      globals.parse(reversed);
    } catch (const CLI::ParseError& e) {
      return PrintParseError(e, console);
    }
    rest = globals.remaining();
  }

  CLI::App app{
      "gpuctl: provision GPU hosts and run training jobs on them without losing the machine.\n"
      "Talks to the gpuctld agent on this host (unix socket) or on another (--agent HOST:PORT with mutual TLS,\n"
      "or --node NAME over SSH), or many nodes at once (--nodes). Global flags may come before or after the\n"
      "subcommand.\n"
      "Exit codes: 0 ok, 1 the agent reported an error, 2 bad flags or input (nothing was done), 3 the agent\n"
      "could not be reached, 4 (--nodes) some nodes could not be reached; the others answered, 5 a local\n"
      "configuration error found before any agent was asked (a --tls-* file missing, unreadable or not PEM),\n"
      "6 the node's SSH host key is not trusted (unknown: --accept-new-host-key; or changed), 124 train wait\n"
      "--timeout ran out.",
      "gpuctl"};
  app.set_version_flag("--version", std::string("gpuctl ") + GPUCTL_VERSION);
  GlobalOptions shown;  // the first pass has read them: these are for --help only
  AddGlobalFlags(app, shown, /*read_environment=*/false);
  app.require_subcommand(1);
  AddHealthCommand(app, context);
  AddTopCommand(app, context);
  AddTrainCommand(app, context);
  AddEventsCommand(app, context);
  AddProbeCommand(app, context);
  AddNodeCommand(app, context);
  AddProvisionCommand(app, context);
  AddBuildCommand(app, context);
  AddGpuCommand(app, context);
  AddNodeBootstrapCommand(*app.get_subcommand("node"), context);
  AddCompletionCommand(app, context);

  // CLI11 wants argv[0] first and parses back to front.
  std::vector<std::string> reversed(rest.rbegin(), rest.rend());
  try {
    app.parse(reversed);
  } catch (const CLI::CallForHelp&) {
    console.out << app.help();
    return kExitOk;
  } catch (const CLI::CallForAllHelp&) {
    console.out << app.help("", CLI::AppFormatMode::All);
    return kExitOk;
  } catch (const CLI::CallForVersion&) {
    console.out << app.version() << "\n";
    return kExitOk;
  } catch (const CLI::RequiredError& e) {
    std::string path;
    const CLI::App* command = DeepestCommand(app, path);
    if (command->get_require_subcommand_min() > 0 && command->get_subcommands().empty()) {
      console.err << SubcommandList(*command, path);
      return kExitUsage;
    }
    return PrintParseError(e, console);
  } catch (const CLI::ParseError& e) {
    return PrintParseError(e, console);
  }
  return context.exit_code;
}

}  // namespace gpuctl::client
