// gpuctl health [--watch] [--interval DURATION]
#pragma once

#include <CLI/CLI.hpp>

#include "client/cli.h"

namespace gpuctl::client {

struct CommandContext;
void AddHealthCommand(CLI::App& app, CommandContext& context);

}  // namespace gpuctl::client
