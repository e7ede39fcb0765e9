// Internal to the host probe: what each part of the collector shares (the
// seams, the options, the result being filled) and how it runs a program.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "agents/provision/host_probe.h"

namespace gpuctl::provision {

struct ProbeContext {
  const sys::HostFs& fs;
  sys::CommandRunner& runner;
  const ProbeOptions& options;
  HostProbe& probe;

  // Runs argv with the command timeout (or `timeout`). Returns its output
  // when it ran and exited 0; otherwise nullopt, and a note naming the
  // program and what happened unless `quiet_when_missing` and it is not
  // installed.
  std::optional<sys::CommandOutput> Run(const std::vector<std::string>& argv, bool quiet_when_missing = false,
                                        std::optional<std::chrono::milliseconds> timeout = std::nullopt);
  bool Exists(const std::string& host_path) const;  // under the HostFs root
  void Note(std::string note) { probe.notes.push_back(std::move(note)); }
};

// Each fills its part of ctx.probe.
void ProbeSystem(ProbeContext& ctx);  // OS, kernel and headers, CPUs, memory, LXC/Proxmox
void ProbeGpus(ProbeContext& ctx);    // lspci, kernel module, user-space library, archs
void ProbeCuda(ProbeContext& ctx);    // /usr/local/cuda-*/bin/nvcc and nvcc on PATH
void ProbePython(ProbeContext& ctx);  // uv, python3, venvs with torch

}  // namespace gpuctl::provision
