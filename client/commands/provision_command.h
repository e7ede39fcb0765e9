// gpuctl provision node [NAME] [--dry-run] [--steps driver,cuda,venv,torch,ext]
//   [--cuda 13.1] [--torch 2.10.0] [--venv PATH] [--ext flash-attn] [--container VMID]
#pragma once

#include <CLI/CLI.hpp>

namespace gpuctl::client {

struct CommandContext;
void AddProvisionCommand(CLI::App& app, CommandContext& context);

}  // namespace gpuctl::client
