// The subcommands of `gpuctl train`, one file each, registered by
// train_command.cc; and what they share.
#pragma once

#include <cstdint>
#include <string>

#include <CLI/CLI.hpp>

#include "gpuctl/v1/jobs.pb.h"

namespace gpuctl::client {

struct CommandContext;

void AddTrainStartCommand(CLI::App& train, CommandContext& context);
// status [NAME] and list.
void AddTrainStatusCommands(CLI::App& train, CommandContext& context);
void AddTrainStopCommand(CLI::App& train, CommandContext& context);
void AddTrainLogsCommand(CLI::App& train, CommandContext& context);
void AddTrainRemoveCommand(CLI::App& train, CommandContext& context);

// The wall clock, read here once per output so runtimes of running jobs agree.
int64_t NowUnixMs();

// Prints one job: JSON (one line) or the given text.
void PrintJob(CommandContext& context, const v1::Job& job, const std::string& text);

}  // namespace gpuctl::client
