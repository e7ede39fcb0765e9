#include "client/commands/probe_command.h"

#include <memory>
#include <ostream>

#include "client/commands/command_context.h"
#include "client/fleet/fleet_commands.h"
#include "client/output/probe_json.h"
#include "client/output/probe_text.h"
#include "common/json_text.h"

namespace gpuctl::client {
namespace {

struct ProbeFlags {
  std::vector<std::string> venvs;
};

void RunProbe(CommandContext& ctx, const ProbeFlags& flags) {
  v1::ProbeRequest request;
  for (const std::string& venv : flags.venvs) {
    if (venv.empty() || venv.front() != '/') {
      return ctx.Fail(InvalidArgument("--venv '" + venv + "' must be an absolute path on the agent's host"));
    }
    request.add_venvs(venv);
  }
  if (!ctx.global.nodes.empty()) return RunFleetProbe(ctx, request);
  auto agent = ctx.ConnectAgent();
  if (!agent.ok()) return ctx.Fail(agent.status());
  Result<v1::HostProbe> probe = (*agent)->Probe(request);
  if (!probe.ok()) return ctx.Fail(probe.status());
  if (ctx.global.format() == OutputFormat::kJson) {
    ctx.console.out << DumpJson(ProbeToJson(*probe), 2) << "\n";
  } else {
    ctx.console.out << ProbeToText(*probe);
  }
  ctx.console.out.flush();
}

}  // namespace

void AddProbeCommand(CLI::App& app, CommandContext& context) {
  auto flags = std::make_shared<ProbeFlags>();
  CLI::App* cmd = app.add_subcommand(
      "probe", "Show what the agent's host has for provisioning: OS, kernel, GPUs, driver, CUDA, Python, venvs");
  cmd->add_option("--venv", flags->venvs, "Also look into this venv (absolute path; repeatable)");
  cmd->callback([&context, flags] { RunProbe(context, *flags); });
}

}  // namespace gpuctl::client
