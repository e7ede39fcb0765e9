// The steps, in the order the plan runs them. Each file step_*.cc holds one.
#pragma once

#include <memory>

#include "agents/provision/step.h"
#include "agents/provision/step_context.h"

namespace gpuctl::provision {

// --container on a Proxmox host: the container's GPU passthrough lines.
std::unique_ptr<Step> MakePassthroughStep(const StepContext& context);
// NVIDIA's CUDA repository and nvidia-open, held; in a container the user
// space only, at the host kernel module's exact version.
std::unique_ptr<Step> MakeDriverStep(const StepContext& context);
std::unique_ptr<Step> MakeCudaStep(const StepContext& context);
std::unique_ptr<Step> MakeVenvStep(const StepContext& context);
std::unique_ptr<Step> MakeTorchStep(const StepContext& context);
std::unique_ptr<Step> MakeExtStep(const StepContext& context);

}  // namespace gpuctl::provision
