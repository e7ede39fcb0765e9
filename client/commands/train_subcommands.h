// The subcommands of `gpuctl train`, one file each, registered by
// train_command.cc; and what they share.
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <string_view>

#include <CLI/CLI.hpp>

#include "common/status.h"
#include "gpuctl/v1/jobs.pb.h"

namespace gpuctl::client {

struct CommandContext;
class AgentClient;

void AddTrainStartCommand(CLI::App& train, CommandContext& context);
// status [NAME] and list.
void AddTrainStatusCommands(CLI::App& train, CommandContext& context);
void AddTrainStopCommand(CLI::App& train, CommandContext& context);
void AddTrainLogsCommand(CLI::App& train, CommandContext& context);
void AddTrainRemoveCommand(CLI::App& train, CommandContext& context);
void AddTrainDumpCommand(CLI::App& train, CommandContext& context);

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

// The wall clock, read here once per output so runtimes of running jobs agree.
int64_t NowUnixMs();

// Prints one job: JSON (one line) or the given text.
void PrintJob(CommandContext& context, const v1::Job& job, const std::string& text);

}  // namespace gpuctl::client
