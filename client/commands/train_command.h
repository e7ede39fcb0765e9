// gpuctl train start|status|list|stop|logs: training jobs on the agent's host.
#pragma once

#include <CLI/CLI.hpp>

namespace gpuctl::client {

struct CommandContext;
void AddTrainCommand(CLI::App& app, CommandContext& context);

}  // namespace gpuctl::client
