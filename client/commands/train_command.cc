#include "client/commands/train_command.h"

#include <chrono>
#include <ostream>

#include "agents/sys/clock.h"
#include "client/commands/command_context.h"
#include "client/commands/train_subcommands.h"
#include "client/output/job_json.h"
#include "common/json_text.h"

namespace gpuctl::client {

int64_t NowUnixMs() {
  return std::chrono::duration_cast<std::chrono::milliseconds>(sys::RealClock().WallNow().time_since_epoch())
      .count();
}

void PrintJob(CommandContext& context, const v1::Job& job, const std::string& text) {
  if (context.global.format() == OutputFormat::kJson) {
    context.console.out << DumpJson(JobToJson(job, NowUnixMs()), -1) << "\n";
  } else {
    context.console.out << text;
  }
  context.console.out.flush();
}

void AddTrainCommand(CLI::App& app, CommandContext& context) {
  CLI::App* train = app.add_subcommand(
      "train",
      "Run training jobs on the agent's host: detached in tmux, logged from the first byte, "
      "watched for CUDA OOMs, NCCL errors, tracebacks and signals.\n"
      "Exit codes: 0 ok, 1 the agent reported an error (e.g. no such job), "
      "2 bad flags or a start the agent refused (nothing was started), 3 agent unreachable; "
      "train wait: 0 the job succeeded, 1 it ended otherwise, 124 --timeout ran out.");
  train->require_subcommand(1);
  AddTrainStartCommand(*train, context);
  AddTrainStatusCommands(*train, context);
  AddTrainListCommand(*train, context);
  AddTrainWaitCommand(*train, context);
  AddTrainAttachCommand(*train, context);
  AddTrainStopCommand(*train, context);
  AddTrainLogsCommand(*train, context);
  AddTrainRemoveCommand(*train, context);
  AddTrainDumpCommand(*train, context);
}

}  // namespace gpuctl::client
