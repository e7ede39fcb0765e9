// gpuctl node bootstrap NAME: install (or update) and start the agent on a
// node over SSH; registered under the `node` command.
#pragma once

#include <CLI/CLI.hpp>

namespace gpuctl::client {

struct CommandContext;
void AddNodeBootstrapCommand(CLI::App& node_command, CommandContext& context);

}  // namespace gpuctl::client
