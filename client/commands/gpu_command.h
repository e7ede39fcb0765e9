// gpuctl gpu drain|undrain GPU: take a GPU out of the queue's service by
// hand, or put it back.
#pragma once

#include <CLI/CLI.hpp>

namespace gpuctl::client {

struct CommandContext;
void AddGpuCommand(CLI::App& app, CommandContext& context);

}  // namespace gpuctl::client
