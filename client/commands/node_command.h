// gpuctl node add|list|rm: the named hosts that --node NAME and
// `provision node NAME` reach over SSH.
#pragma once

#include <CLI/CLI.hpp>

namespace gpuctl::client {

struct CommandContext;
void AddNodeCommand(CLI::App& app, CommandContext& context);

}  // namespace gpuctl::client
