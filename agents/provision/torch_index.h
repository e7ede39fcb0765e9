// Which PyTorch wheel index matches a CUDA toolkit. Extension builds need
// torch built for the toolkit's CUDA major (PyTorch's cpp_extension refuses
// a major mismatch: "The detected CUDA version (13.1) mismatches the version
// that was used to compile PyTorch (12.8)"), so the mapping is by major first.
#pragma once

#include <optional>
#include <string>
#include <string_view>

namespace gpuctl::provision {

struct CudaVersion {
  int major = 0;
  int minor = 0;
  bool operator==(const CudaVersion&) const = default;
};

// "13.1" or "13.1.80" -> {13, 1}; nullopt when it is not MAJOR.MINOR[...].
std::optional<CudaVersion> ParseCudaVersion(std::string_view text);
std::string FormatCudaVersion(CudaVersion v);  // "13.1"

// The wheel index tag for a toolkit: the newest index of the same major whose
// minor is not above the toolkit's (12.6 -> cu126, 12.9 -> cu129, 13.1 ->
// cu130), else the oldest of that major. nullopt: PyTorch publishes no index
// for that major.
std::optional<std::string> TorchIndexTagForCuda(CudaVersion toolkit);
// "https://download.pytorch.org/whl/cu130".
std::string TorchIndexUrl(std::string_view tag);
// "cu130" -> {13, 0}; nullopt when not of that form.
std::optional<CudaVersion> CudaVersionOfIndexTag(std::string_view tag);

}  // namespace gpuctl::provision
