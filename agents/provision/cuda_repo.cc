#include "agents/provision/cuda_repo.h"

#include <array>

namespace gpuctl::provision {

std::optional<std::string> CudaRepoPath(std::string_view os_id, std::string_view version_id,
                                        std::string_view machine) {
  // The releases NVIDIA's repository serves (developer.download.nvidia.com/compute/cuda/repos/).
  static constexpr std::array<std::string_view, 6> kKnown = {"ubuntu2004", "ubuntu2204", "ubuntu2404",
                                                             "debian11",   "debian12",   "debian13"};
  std::string name(os_id);
  if (os_id == "ubuntu") {
    for (char c : version_id) {
      if (c != '.') name += c;
    }
  } else if (os_id == "debian") {
    name += std::string(version_id.substr(0, version_id.find('.')));
  } else {
    return std::nullopt;
  }
  bool known = false;
  for (std::string_view k : kKnown) known = known || k == name;
  if (!known) return std::nullopt;
  std::string arch;
  if (machine == "x86_64") {
    arch = "x86_64";
  } else if (machine == "aarch64") {
    arch = "sbsa";
  } else {
    return std::nullopt;
  }
  return name + "/" + arch;
}

std::string CudaKeyringUrl(std::string_view repo_path) {
  return "https://developer.download.nvidia.com/compute/cuda/repos/" + std::string(repo_path) + "/" +
         std::string(kCudaKeyringDeb);
}

}  // namespace gpuctl::provision
