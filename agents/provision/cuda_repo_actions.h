// The actions that add NVIDIA's CUDA apt repository (download and install
// cuda-keyring) when it is not there yet; shared by the driver and cuda steps.
#pragma once

#include <map>
#include <vector>

#include "agents/provision/apt_packages.h"
#include "agents/provision/step.h"
#include "agents/provision/step_context.h"

namespace gpuctl::provision {

inline constexpr std::string_view kCudaKeyringPackage = "cuda-keyring";

// Nothing when cuda-keyring is installed; else curl + dpkg -i (curl and
// ca-certificates installed first where they are missing). Errors: a
// refusal when NVIDIA publishes no repository for the target's OS.
Result<std::vector<StepAction>> CudaRepoActions(const StepContext& context,
                                                const std::map<std::string, InstalledPackage>& installed);

StepAction AptUpdate();
StepAction AptInstall(std::vector<std::string> packages, bool no_recommends = false);

}  // namespace gpuctl::provision
