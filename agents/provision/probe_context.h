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

  // When a failed run is worth a note of its own (callers that explain the
  // failure better themselves say so).
  enum class NoteFailure { kAlways, kUnlessMissing, kNever };
  // Runs argv with the command timeout (or `timeout`). Returns its output
  // when it ran and exited 0; otherwise nullopt, with a note naming the
  // program and what happened as `note` says.
  std::optional<sys::CommandOutput> Run(const std::vector<std::string>& argv, NoteFailure note = NoteFailure::kAlways,
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
