// gpuctl train rm NAME: forget an ended job (its record and its logs), or
// clear an unreadable record so that the name can be used again.
#include <memory>
#include <ostream>

#include <nlohmann/json.hpp>

#include "client/commands/command_context.h"
#include "client/commands/train_subcommands.h"
#include "client/multinode/multinode_commands.h"
#include "common/job_name.h"
#include "common/json_text.h"
#include "common/utf8.h"

namespace gpuctl::client {
namespace {

void RunRemove(CommandContext& ctx, const std::string& name) {
  if (Status s = ValidateJobName(name); !s.ok()) return ctx.Fail(s);
  if (IsMultinodeJob(ctx, name)) return RunMultinodeRemove(ctx, name);
  auto agent = ctx.ConnectAgent();
  if (!agent.ok()) return ctx.Fail(agent.status());
  Result<v1::RemoveJobResponse> removed = (*agent)->RemoveJob(name);
  if (!removed.ok()) return ctx.Fail(removed.status().Wrap("removing job " + name));
  if (ctx.global.format() == OutputFormat::kJson) {
    ctx.console.out << DumpJson({{"removed", removed->name()}, {"run_id", removed->run_id()}}) << "\n";
  } else {
    ctx.console.out << "removed job " << EscapeForTerminal(removed->name())
                    << (removed->run_id().empty() ? "" : " (run " + EscapeForTerminal(removed->run_id()) + ")")
                    << ": its record and logs are gone\n";
  }
}

}  // namespace

void AddTrainRemoveCommand(CLI::App& train, CommandContext& context) {
  auto name = std::make_shared<std::string>();
  CLI::App* cmd = train.add_subcommand("rm", "Remove an ended job's record and logs, or an unreadable record");
  cmd->footer(
      "A job that may still run is refused (exit 2): stop it first with gpuctl train stop NAME.\n"
      "An unreadable record blocks its name until it is removed. Exit 1 when the agent knows no job NAME.");
  cmd->add_option("name", *name, "The job's name")->required()->type_name("NAME");
  cmd->callback([&context, name] { RunRemove(context, *name); });
}

}  // namespace gpuctl::client
