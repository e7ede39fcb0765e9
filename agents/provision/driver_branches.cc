#include "agents/provision/driver_branches.h"


#include "agents/provision/torch_index.h"
#include "agents/sys/text_fields.h"

namespace gpuctl::provision {

std::optional<int> DriverBranchOf(std::string_view version) {
  std::optional<int> branch = sys::ToNumber<int>(version.substr(0, version.find('.')));
  if (!branch || *branch <= 0) return std::nullopt;
  return branch;
}

std::optional<BranchSpan> BranchSpanFor(std::string_view compute_capability) {
  std::optional<CudaVersion> cc = ParseCudaVersion(compute_capability);
  if (!cc) return std::nullopt;
  const int v = cc->major * 10 + cc->minor;
  if (v >= 30 && v < 50) return BranchSpan{390, 470, "Kepler"};  // 470 is Kepler's last branch
  if (v >= 50 && v < 60) return BranchSpan{450, kLastBranchBeforeTuring, "Maxwell"};
  if (v >= 60 && v < 70) return BranchSpan{450, kLastBranchBeforeTuring, "Pascal"};
  if (v == 70 || v == 72) return BranchSpan{450, kLastBranchBeforeTuring, "Volta"};
  if (v == 75) return BranchSpan{515, std::nullopt, "Turing"};
  if (v == 80 || v == 86 || v == 87) return BranchSpan{515, std::nullopt, "Ampere"};
  if (v == 89) return BranchSpan{525, std::nullopt, "Ada Lovelace"};
  if (v == 90) return BranchSpan{550, std::nullopt, "Hopper"};
  if (v >= 100 && v < 130) return BranchSpan{570, std::nullopt, "Blackwell"};
  return std::nullopt;
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
