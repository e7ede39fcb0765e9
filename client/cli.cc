#include "client/cli.h"

#include <ostream>

#include <CLI/CLI.hpp>

#include "client/commands/command_context.h"
#include "client/commands/events_command.h"
#include "client/commands/health_command.h"
#include "client/commands/node_bootstrap_command.h"
#include "client/commands/node_command.h"
#include "client/commands/probe_command.h"
#include "client/commands/provision_command.h"
#include "client/commands/train_command.h"

namespace gpuctl::client {

int RunCli(const std::vector<std::string>& args, Console& console, const std::string& env_agent) {
  CommandContext context{.global = {}, .console = console, .env_agent = env_agent, .args = args};
  CLI::App app{
      "gpuctl: provision GPU hosts and run training jobs on them without losing the machine.\n"
      "Talks to the gpuctld agent on this host (unix socket) or on another (--agent HOST:PORT).",
      "gpuctl"};
  app.set_version_flag("--version", std::string("gpuctl ") + GPUCTL_VERSION);
  app.add_option("--agent", context.global.agent,
                 "Agent address: unix:PATH or HOST:PORT (default $GPUCTL_AGENT, else unix:/run/gpuctl/gpuctld.sock)");
  app.add_option("--node", context.global.node,
                 "Reach the agent of this node (gpuctl node add) through SSH (default $GPUCTL_NODE)")
      ->envname("GPUCTL_NODE");
  app.add_flag("--accept-new-host-key", context.global.accept_new_host_key,
               "Record an unknown SSH host key in known_hosts instead of refusing it (a changed key is always "
               "refused)");
  app.add_option("-o,--output", context.global.output, "Output format: text or json")
      ->check(CLI::IsMember({"text", "json"}))
      ->capture_default_str();
  app.require_subcommand(1);
  AddHealthCommand(app, context);
  AddTrainCommand(app, context);
  AddEventsCommand(app, context);
  AddProbeCommand(app, context);
  AddNodeCommand(app, context);
  AddProvisionCommand(app, context);
  AddNodeBootstrapCommand(*app.get_subcommand("node"), context);

  // CLI11 wants argv[0] first and parses back to front.
  std::vector<std::string> reversed(args.rbegin(), args.rend());
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
  } catch (const CLI::ParseError& e) {
    // Subcommand --help surfaces here as a "success" parse error.
    if (e.get_exit_code() == 0) {
      console.out << e.what();
      return kExitOk;
    }
    console.err << "gpuctl: " << e.what() << "\nRun 'gpuctl --help' for usage.\n";
    return kExitUsage;
  }
  return context.exit_code;
}

}  // namespace gpuctl::client
