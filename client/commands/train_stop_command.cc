// gpuctl train stop NAME [--grace DURATION]
#include <memory>
#include <ostream>

#include "client/commands/command_context.h"
#include "client/commands/train_subcommands.h"
#include "client/multinode/multinode_commands.h"
#include "client/output/job_text.h"
#include "common/job_name.h"
#include "common/units.h"

namespace gpuctl::client {
namespace {

// The wire carries milliseconds in 32 bits; a day is plenty and catches typos.
constexpr std::chrono::hours kMaxGrace{24};

struct StopFlags {
  std::string name;
  std::string grace = "10s";
};

void RunStop(CommandContext& ctx, const StopFlags& flags) {
  if (Status s = ValidateJobName(flags.name); !s.ok()) return ctx.Fail(s);
  Result<std::chrono::milliseconds> grace = ParseDuration(flags.grace);
  if (!grace.ok()) return ctx.Fail(grace.status().Wrap("--grace"));
  if (*grace > kMaxGrace) return ctx.Fail(InvalidArgument("--grace must be at most 24h, got " + flags.grace));
  if (IsMultinodeJob(ctx, flags.name)) return RunMultinodeStop(ctx, flags.name, *grace);
  auto agent = ctx.ConnectAgent();
  if (!agent.ok()) return ctx.Fail(agent.status());
  Result<v1::Job> job = (*agent)->StopJob(flags.name, *grace);
  if (!job.ok()) return ctx.Fail(job.status().Wrap("stopping job " + flags.name));
  PrintJob(ctx, *job, JobStoppedText(*job, NowUnixMs()));
}

}  // namespace

void AddTrainStopCommand(CLI::App& train, CommandContext& context) {
  auto flags = std::make_shared<StopFlags>();
  CLI::App* cmd = train.add_subcommand("stop", "Stop a job and print its final state");
  cmd->footer(
      "Sends SIGTERM to the job's process group and SIGKILL after the grace period. A multi-node job "
      "(train start --multinode) is stopped on every node at once.\n"
      "Exit 1 when the agent knows no job NAME; 3 when it cannot be reached.");
  cmd->add_option("name", flags->name, "The job's name")->required()->type_name("NAME");
  cmd->add_option("--grace", flags->grace,
                  "How long the job gets to exit after SIGTERM before SIGKILL (e.g. 30s, 2m; 0: SIGKILL at once)")
      ->capture_default_str()
      ->type_name("DURATION");
  cmd->callback([&context, flags] { RunStop(context, *flags); });
}

}  // namespace gpuctl::client
