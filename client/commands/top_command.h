#pragma once

#include <CLI/CLI.hpp>

namespace gpuctl::client {

struct CommandContext;
// gpuctl top [--once] [--interval D]: nodes x GPUs and their jobs, live.
void AddTopCommand(CLI::App& app, CommandContext& context);

}  // namespace gpuctl::client
