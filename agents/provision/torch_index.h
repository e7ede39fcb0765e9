// Which PyTorch wheel index matches a CUDA toolkit. Extension builds need
// torch built for the toolkit's CUDA major (PyTorch's cpp_extension refuses
// a major mismatch: "The detected CUDA version (13.1) mismatches the version
// that was used to compile PyTorch (12.8)"), so the mapping is by major first.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace gpuctl::provision {

struct CudaVersion {
  int major = 0;
  int minor = 0;
  bool operator==(const CudaVersion&) const = default;
};

// "13.1" or "13.1.80" -> {13, 1}; nullopt when it is not MAJOR.MINOR[...].
std::optional<CudaVersion> ParseCudaVersion(std::string_view text);
std::string FormatCudaVersion(CudaVersion v);  // "13.1"

// The CUDA wheel indexes PyTorch publishes for a torch release, from
// PyTorch's release matrix (checked 2026-12):
//   2.5: cu118 cu121 cu124      2.6: cu118 cu124 cu126    2.7: cu118 cu126 cu128
//   2.8: cu126 cu128 cu129      2.9, 2.10, 2.11: cu126 cu128 cu130
//   2.12 and later: cu126 cu130 cu132
// Empty for releases before 2.5 or text that is not a version.
std::vector<std::string> TorchIndexTags(std::string_view torch_version);

// The index to install torch_version from for a toolkit: of that release's
// indexes with the toolkit's CUDA major, the newest whose minor is not above
// the toolkit's, else the oldest of that major. With a GPU before Turing
// (compute capability < 7.5) only indexes before cu128 will do (cu126): cu128
// dropped Maxwell, Pascal and then Volta, cu130 needs Turing.
// nullopt: none fits (TorchIndexChoices then says what would).
std::optional<std::string> TorchIndexTagFor(std::string_view torch_version, CudaVersion toolkit, bool pre_turing);
// For a refusal: "torch 2.10.0 is published for cu126, cu128, cu130".
std::string TorchIndexChoices(std::string_view torch_version);
// Whether any of these compute capabilities ("6.0", "7.0") is below Turing's 7.5.
bool AnyBeforeTuring(const std::vector<std::string>& compute_capabilities);
// "https://download.pytorch.org/whl/cu130".
std::string TorchIndexUrl(std::string_view tag);
// "cu130" -> {13, 0}; nullopt when not of that form.
std::optional<CudaVersion> CudaVersionOfIndexTag(std::string_view tag);

}  // namespace gpuctl::provision
