// gpuctl build [flags] -- COMMAND...: a build as a governed job.
#pragma once

#include <CLI/CLI.hpp>

namespace gpuctl::client {

struct CommandContext;
void AddBuildCommand(CLI::App& app, CommandContext& context);

}  // namespace gpuctl::client
