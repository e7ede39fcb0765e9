// The CUDA toolkit as apt installs it: package names, install path, the
// profile.d file that puts it on PATH, and which toolkit a host has.
#pragma once

#include <optional>
#include <string>

#include "agents/provision/step_context.h"
#include "agents/provision/torch_index.h"

namespace gpuctl::provision {

inline constexpr std::string_view kCudaProfilePath = "/etc/profile.d/gpuctl-cuda.sh";

std::string CudaToolkitPackage(CudaVersion v);  // 13.1 -> "cuda-toolkit-13-1"
std::string CudaHome(CudaVersion v);            // "/usr/local/cuda-13.1"
std::string CudaProfileScript(CudaVersion v);   // the profile.d file's content

// The toolkit later steps build against: the requested one when the cuda step
// is in this run (it will be installed before them), else the newest of the
// cuda-toolkit-X-Y packages installed and the /usr/local/cuda-X.Y the probe
// found. nullopt when there is none.
Result<std::optional<CudaVersion>> ToolkitForBuilds(const StepContext& context);

}  // namespace gpuctl::provision
