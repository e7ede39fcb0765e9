// NVIDIA's CUDA apt repository for an OS: the keyring package that adds it.
#pragma once

#include <optional>
#include <string>
#include <string_view>

namespace gpuctl::provision {

inline constexpr std::string_view kCudaKeyringDeb = "cuda-keyring_1.1-1_all.deb";

// os-release ID and VERSION_ID and the machine to the repository's name:
// ubuntu 24.04 x86_64 -> "ubuntu2404/x86_64", debian 12 -> "debian12/x86_64",
// aarch64 -> ".../sbsa". nullopt for an OS NVIDIA publishes no repository for.
std::optional<std::string> CudaRepoPath(std::string_view os_id, std::string_view version_id,
                                        std::string_view machine);
// "https://developer.download.nvidia.com/compute/cuda/repos/ubuntu2404/x86_64/cuda-keyring_1.1-1_all.deb"
std::string CudaKeyringUrl(std::string_view repo_path);

}  // namespace gpuctl::provision
