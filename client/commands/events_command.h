// gpuctl events [-f] [--after SEQ]
#pragma once

#include <CLI/CLI.hpp>

namespace gpuctl::client {

struct CommandContext;
void AddEventsCommand(CLI::App& app, CommandContext& context);

}  // namespace gpuctl::client
