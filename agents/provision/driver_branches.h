// NVIDIA driver branches: which one gpuctl installs by default, and what each
// branch can drive. One table, with its sources and the date it was checked.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace gpuctl::provision {

// The branch a host gets without --driver-branch. Chosen 2026-12-02: 580 is
// NVIDIA's long-term support branch (supported into 2028), the last branch
// for Maxwell, Pascal and Volta, it drives Blackwell, and every CUDA 13.x
// toolkit runs on it (minor-version compatibility). Newer branches (590,
// 595, 610) are production or new-feature branches that move faster.
// Sources: NVIDIA's driver release notes and "Driver Installation Guide"
// (r590, 2025-12), CUDA 13 release notes (compatibility table).
inline constexpr int kDefaultDriverBranch = 580;
inline constexpr std::string_view kDefaultDriverBranchChosen = "2026-12-02";

// nvidia-driver-pinning-<branch or version> exists in NVIDIA's repository
// from the 580 branch on; before it, gpuctl writes the same apt preferences.
inline constexpr int kFirstBranchWithPinningPackage = 580;
// From 590 on, NVIDIA's Ubuntu packages drop the branch from their names
// (libnvidia-compute, not libnvidia-compute-590); the pinning package picks the branch.
inline constexpr int kFirstBranchWithUnversionedNames = 590;
// The proprietary modules of 580 are the last for GPUs before Turing (compute
// capability < 7.5); the open modules need Turing's GSP.
inline constexpr int kLastBranchBeforeTuring = 580;

// The branches that drive a GPU generation, as gpuctl installs them (open
// modules from Turing on, the proprietary ones before), by compute
// capability. Sources: NVIDIA's driver README, "Appendix A. Supported NVIDIA
// GPU Products" of each branch (r470, r515, r525, r550, r570, r580), and the
// open-gpu-kernel-modules README (open modules from 515, for Turing and
// later). The oldest is the one that drives every board of the generation
// (Hopper's H200 and H20 came with 550), so it may be newer than one board
// needs; nullopt for the newest: no end known.
struct BranchSpan {
  int oldest = 0;
  std::optional<int> newest;
  std::string_view generation;  // "Kepler"
};
// nullopt for a compute capability that is not MAJOR.MINOR of a known generation.
std::optional<BranchSpan> BranchSpanFor(std::string_view compute_capability);

// 580 from "580" or "580.95.05"; nullopt when it does not start with a number.
std::optional<int> DriverBranchOf(std::string_view version);

// What the GPUs need from the kernel modules.
struct GpuModuleNeeds {
  bool before_turing = false;  // some GPU has compute capability < 7.5: proprietary modules, branch <= 580
  bool blackwell = false;      // some GPU has compute capability >= 10.0: open modules only
};
GpuModuleNeeds ModuleNeedsOf(const std::vector<std::string>& compute_capabilities);

}  // namespace gpuctl::provision
