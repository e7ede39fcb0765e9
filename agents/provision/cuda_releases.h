// Which CUDA toolkits can exist where: the releases NVIDIA made, the range
// each apt repository serves, and the driver each major needs. A plan that
// asks for one that cannot exist is refused before anything is installed.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "agents/provision/torch_index.h"
#include "common/status.h"

namespace gpuctl::provision {

// Refuses a toolkit NVIDIA never released (12.7), or one the repository
// (e.g. "debian13", "ubuntu2004": CudaRepoPath without the arch) does not
// serve (debian13 starts at 13.0; ubuntu2004 and debian11 end at 12.9),
// naming what would work (kFailedPrecondition: a refusal). A version newer than the table passes: the
// repository itself is then the judge.
Status CheckCudaToolkitExists(std::string_view repo_name, CudaVersion version);

// The newest toolkit release in the table above (from NVIDIA's release notes).
CudaVersion NewestKnownCuda();

// CUDA 13 needs the 580 driver branch or later. `driver` is the loaded
// kernel module's version ("550.127.05"); nullopt (no driver yet) passes.
Status CheckCudaAgainstDriver(CudaVersion version, const std::optional<std::string>& driver);

// CUDA 13 dropped GPUs before Turing (compute capability < 7.5: Maxwell,
// Pascal, Volta); 12.x still builds for them. Refusal names 12.9.
Status CheckCudaAgainstGpus(CudaVersion version, const std::vector<std::string>& compute_capabilities);

}  // namespace gpuctl::provision
