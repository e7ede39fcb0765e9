// The subcommands of `gpuctl train`, one file each, registered by
// train_command.cc; and what they share.
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <string_view>
#include <vector>

#include <CLI/CLI.hpp>

#include "common/status.h"
#include "gpuctl/v1/jobs.pb.h"

namespace gpuctl::client {

struct CommandContext;
struct Node;
class AgentClient;

void AddTrainStartCommand(CLI::App& train, CommandContext& context);
// status [NAME] and list.
void AddTrainStatusCommands(CLI::App& train, CommandContext& context);
// list [--state S,...] [--watch].
void AddTrainListCommand(CLI::App& train, CommandContext& context);
// wait NAME [--timeout D], attach NAME.
void AddTrainWaitCommand(CLI::App& train, CommandContext& context);
void AddTrainAttachCommand(CLI::App& train, CommandContext& context);
void AddTrainStopCommand(CLI::App& train, CommandContext& context);
void AddTrainLogsCommand(CLI::App& train, CommandContext& context);
void AddTrainRemoveCommand(CLI::App& train, CommandContext& context);
void AddTrainDumpCommand(CLI::App& train, CommandContext& context);

struct TrainListFlags {
  std::string states;  // --state: not given, every state
  bool states_given = false;  // --state "" is refused, not read as every state
  bool watch = false;
  std::string interval = "2s";
};
// `train list`, and `train status` without NAME.
void RunTrainList(CommandContext& context, const TrainListFlags& flags);

// The directory a job started from here runs in unless --cwd says otherwise:
// this one when the job runs on this host (a local agent on its unix socket;
// not --node, a TCP agent or `container`), else empty (the agent chooses).
// Errors: the current directory cannot be read.
Result<std::string> LocalJobCwd(CommandContext& context, const std::string& container);

// Writes a job's log to stdout byte for byte; with request.follow, until
// the job has ended, resuming across dropped streams.
Status WriteJobLog(CommandContext& context, AgentClient& client, const v1::StreamLogsRequest& request);
// The same with the bytes given to `write` (false: stop) and notes (reconnecting)
// to `note`.
Status StreamJobLog(AgentClient& client, const v1::StreamLogsRequest& request,
                    const std::function<bool(std::string_view)>& write,
                    const std::function<void(const std::string&)>& note);

// `train wait`'s exit code for a job ended for good: 0 succeeded, else 1.
int WaitExitCodeFor(const v1::Job& job);

// `train attach`: the argv gpuctl becomes for a running job: tmux attach on
// the agent's tmux server, through ssh -t when `node` is given. Errors:
// kFailedPrecondition for a job queued or ended (no session).
Result<std::vector<std::string>> TrainAttachArgv(const v1::Job& job, const Node* node, bool accept_new_host_key);

// The wall clock, read here once per output so runtimes of running jobs agree.
int64_t NowUnixMs();

// Prints one job: JSON (one line) or the given text.
void PrintJob(CommandContext& context, const v1::Job& job, const std::string& text);

}  // namespace gpuctl::client
