#include "agents/provision/driver_branches.h"

#include <charconv>

#include "agents/provision/torch_index.h"

namespace gpuctl::provision {

std::optional<int> DriverBranchOf(std::string_view version) {
  int branch = 0;
  auto [end, ec] = std::from_chars(version.data(), version.data() + version.size(), branch);
  if (ec != std::errc() || end == version.data() || branch <= 0) return std::nullopt;
  if (end != version.data() + version.size() && *end != '.') return std::nullopt;
  return branch;
}

GpuModuleNeeds ModuleNeedsOf(const std::vector<std::string>& compute_capabilities) {
  GpuModuleNeeds needs;
  needs.before_turing = AnyBeforeTuring(compute_capabilities);
  for (const std::string& capability : compute_capabilities) {
    std::optional<CudaVersion> cc = ParseCudaVersion(capability);
    if (cc && cc->major >= 10) needs.blackwell = true;
  }
  return needs;
}

}  // namespace gpuctl::provision
