// gpuctl train status [NAME] (list: train_list_command.cc).
#include <memory>
#include <ostream>

#include "client/commands/command_context.h"
#include "client/fleet/fleet_commands.h"
#include "client/commands/train_subcommands.h"
#include "client/multinode/multinode_commands.h"
#include "client/output/job_json.h"
#include "client/output/job_text.h"
#include "common/job_name.h"
#include "common/json_text.h"

namespace gpuctl::client {
namespace {

void RunStatus(CommandContext& ctx, const std::string& name) {
  if (name.empty()) return RunTrainList(ctx, {});
  if (Status s = ValidateJobName(name); !s.ok()) return ctx.Fail(s);
  if (!ctx.global.nodes.empty()) return RunFleetJobStatus(ctx, name);
  if (IsMultinodeJob(ctx, name)) return RunMultinodeStatus(ctx, name);
  auto agent = ctx.ConnectAgent();
  if (!agent.ok()) return ctx.Fail(agent.status());
  Result<v1::Job> job = (*agent)->GetJob(name);
  if (!job.ok()) return ctx.Fail(job.status());
  PrintJob(ctx, *job, JobToText(*job, NowUnixMs()));
}

}  // namespace

void AddTrainStatusCommands(CLI::App& train, CommandContext& context) {
  auto name = std::make_shared<std::string>();
  CLI::App* status = train.add_subcommand("status", "Show one job in detail, or all jobs without NAME");
  status->footer(
      "Shows state, exit status, runtime, metrics (step, loss, throughput) and the events found in the log "
      "(CUDA OOMs, NCCL errors, tracebacks, signals). Without NAME, the same as 'list'. A multi-node job "
      "(train start --multinode) shows a row per part, with its node and rank, and why a part failed.\n"
      "Exit 0 whatever state the job is in; 1 when the agent knows no job NAME; 3 when it cannot be reached.");
  status->add_option("name", *name, "The job's name")->type_name("NAME");
  status->callback([&context, name] { RunStatus(context, *name); });
}

}  // namespace gpuctl::client
