// gpuctl probe [--venv PATH]...: what the agent's host has, for provisioning.
#pragma once

#include <CLI/CLI.hpp>

namespace gpuctl::client {

struct CommandContext;
void AddProbeCommand(CLI::App& app, CommandContext& context);

}  // namespace gpuctl::client
