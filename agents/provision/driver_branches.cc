#include "agents/provision/driver_branches.h"


#include "agents/provision/torch_index.h"
#include "agents/sys/text_fields.h"

namespace gpuctl::provision {

std::optional<int> DriverBranchOf(std::string_view version) {
  std::optional<int> branch = sys::ToNumber<int>(version.substr(0, version.find('.')));
  if (!branch || *branch <= 0) return std::nullopt;
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
