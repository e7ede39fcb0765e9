// gpuctl completion bash|zsh: a shell completion script generated from the
// command tree itself, so it never drifts from the flags.
#pragma once

#include <string>

#include <CLI/CLI.hpp>

#include "client/commands/command_context.h"

namespace gpuctl::client {

// Call last, once every other command is added: the script lists them all.
void AddCompletionCommand(CLI::App& app, CommandContext& context);

// The bash script for `app`: subcommands and long flags per command path,
// the global flags everywhere (they work after a subcommand too).
std::string BashCompletionScript(const CLI::App& app);
// zsh runs the bash script through bashcompinit.
std::string ZshCompletionScript(const CLI::App& app);

}  // namespace gpuctl::client
