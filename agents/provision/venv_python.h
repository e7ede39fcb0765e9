// Asking the venv's Python what it has: torch (and the CUDA it was built
// for) and extension modules, by importing them, the only proof that counts.
#pragma once

#include <optional>
#include <string>
#include <string_view>

#include "agents/provision/step_context.h"
#include "agents/provision/torch_index.h"

namespace gpuctl::provision {

std::string VenvPython(const ProvisionOptions& options);  // VENV/bin/python

struct TorchBuild {
  std::string version;                // "2.10.0+cu128"
  std::string base_version;           // "2.10.0"
  std::optional<CudaVersion> cuda;    // torch.version.cuda; nullopt for a CPU build
};
// The line `import torch; print(torch.__version__, torch.version.cuda)` prints:
// "2.10.0+cu128 12.8" or "2.10.0+cpu None".
std::optional<TorchBuild> ParseTorchImport(std::string_view line);

// nullopt when the venv has no python or torch does not import.
Result<std::optional<TorchBuild>> ImportTorch(const StepContext& context);

// The message for a torch built for another CUDA major than the toolkit, in
// PyTorch's own words (what an extension build would fail with).
std::string TorchMismatchMessage(const TorchBuild& torch, CudaVersion toolkit);

}  // namespace gpuctl::provision
