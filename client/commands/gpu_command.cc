#include "client/commands/gpu_command.h"

#include <memory>
#include <ostream>

#include <nlohmann/json.hpp>

#include "client/commands/command_context.h"
#include "client/output/health_json.h"
#include "common/json_text.h"
#include "common/utf8.h"

namespace gpuctl::client {
namespace {

void PrintDrainState(CommandContext& ctx, const v1::GpuDrainState& state) {
  if (ctx.global.format() == OutputFormat::kJson) {
    ctx.console.out << DumpJson({{"gpu", state.index()},
                                 {"uuid", state.uuid()},
                                 {"pci_bus_id", state.pci_bus_id()},
                                 {"drained", state.drained()},
                                 {"fault", state.drained() ? GpuFaultJson(state.fault()) : nlohmann::json(nullptr)}})
                    << "\n";
    return;
  }
  ctx.console.out << "GPU " << state.index() << " (" << EscapeForTerminal(state.uuid()) << ") "
                  << (state.drained() ? "drained: " + EscapeForTerminal(state.fault().reason()) +
                                            "; no job is placed on it"
                                      : std::string("in service"))
                  << "\n";
}

}  // namespace

void AddGpuCommand(CLI::App& app, CommandContext& context) {
  CLI::App* gpu = app.add_subcommand("gpu", "Take a GPU out of service (drain) or put it back (undrain)");
  gpu->require_subcommand(1);
  gpu->footer(
      "A GPU the agent sees fault (an Xid it is to blame for, double-bit ECC errors, a GPU that is no longer\n"
      "listed) is drained by the agent itself, and the jobs on it are stopped. Drains survive agent restarts;\n"
      "gpuctl health shows them. GPU: an index, a UUID or a PCI bus id.");

  auto target = std::make_shared<std::string>();
  auto reason = std::make_shared<std::string>();
  CLI::App* drain = gpu->add_subcommand("drain", "Drain a GPU: the queue places no new job on it (running ones go on)");
  drain->add_option("gpu", *target, "Index, UUID or PCI bus id")->required()->type_name("GPU");
  drain->add_option("--reason", *reason, "Why, shown in gpuctl health and the gpu_drained event")->type_name("TEXT");
  drain->callback([&context, target, reason] {
    auto agent = context.ConnectAgent();
    if (!agent.ok()) return context.Fail(agent.status());
    Result<v1::GpuDrainState> state = (*agent)->DrainGpu(*target, *reason);
    if (!state.ok()) return context.Fail(state.status().Wrap("draining GPU " + *target));
    PrintDrainState(context, *state);
  });

  auto undrain_target = std::make_shared<std::string>();
  auto force = std::make_shared<bool>(false);
  CLI::App* undrain = gpu->add_subcommand("undrain", "Put a drained GPU back in service");
  undrain->add_option("gpu", *undrain_target, "Index, UUID or PCI bus id")->required()->type_name("GPU");
  undrain->add_flag("--force", *force, "Even while the fault still reads true (ECC errors, not listed)");
  undrain->footer("Refused (exit 2) while the GPU still reads faulty, unless --force. Exit 1 when the agent knows no such GPU.");
  undrain->callback([&context, undrain_target, force] {
    auto agent = context.ConnectAgent();
    if (!agent.ok()) return context.Fail(agent.status());
    Result<v1::GpuDrainState> state = (*agent)->UndrainGpu(*undrain_target, *force);
    if (!state.ok()) return context.Fail(state.status().Wrap("undraining GPU " + *undrain_target));
    PrintDrainState(context, *state);
  });
}

}  // namespace gpuctl::client
