#include "agents/build/cuda_arch.h"

#include <algorithm>
#include <array>
#include <cctype>

namespace gpuctl::build {
namespace {

bool IsDigit(char c) { return std::isdigit(static_cast<unsigned char>(c)) != 0; }
bool IsLower(char c) { return std::islower(static_cast<unsigned char>(c)) != 0; }

// Digits, then an optional single lower-case suffix ("a" arch-specific, "f"
// family), as nvcc's sm_90a / sm_100f spell them.
bool SplitArch(std::string_view arch, std::string_view& digits, std::string_view& suffix) {
  size_t n = 0;
  while (n < arch.size() && IsDigit(arch[n])) ++n;
  digits = arch.substr(0, n);
  suffix = arch.substr(n);
  return digits.size() >= 2 && suffix.size() <= 1 && (suffix.empty() || IsLower(suffix[0]));
}

}  // namespace

Result<std::string> ArchFromComputeCapability(std::string_view capability) {
  size_t dot = capability.find('.');
  std::string_view major = capability.substr(0, dot);
  std::string_view rest = dot == std::string_view::npos ? std::string_view() : capability.substr(dot + 1);
  std::string_view minor_digits, suffix;
  bool minor_ok = rest.size() >= 1 && IsDigit(rest[0]);
  if (minor_ok) {
    minor_digits = rest.substr(0, 1);
    suffix = rest.substr(1);
  }
  bool major_ok = !major.empty() && std::all_of(major.begin(), major.end(), IsDigit);
  if (!major_ok || !minor_ok || suffix.size() > 1 || (!suffix.empty() && !IsLower(suffix[0]))) {
    return InvalidArgument("'" + std::string(capability) + "' is not a compute capability (MAJOR.MINOR, e.g. 9.0)");
  }
  return std::string(major) + std::string(minor_digits) + std::string(suffix);
}

Result<std::string> TorchArchFromArch(std::string_view arch) {
  std::string_view digits, suffix;
  if (!SplitArch(arch, digits, suffix)) {
    return InvalidArgument("'" + std::string(arch) +
                           "' is not a CUDA arch (digits like 90 or 100, optional suffix a/f)");
  }
  return std::string(digits.substr(0, digits.size() - 1)) + "." + std::string(digits.substr(digits.size() - 1)) +
         std::string(suffix);
}

Result<std::string> KnownArch(std::string_view capability) {
  // Every compute capability nvcc 12.x and 13.x accept as a target; 11.0 is
  // Thor (renamed from 10.1 in CUDA 13).
  static constexpr std::array<std::string_view, 20> kKnown = {
      "5.0", "5.2", "5.3", "6.0", "6.1", "6.2", "7.0", "7.2", "7.5", "8.0",
      "8.6", "8.7", "8.9", "9.0", "10.0", "10.1", "10.3", "11.0", "12.0", "12.1"};
  Result<std::string> arch = ArchFromComputeCapability(capability);
  std::string_view base = capability.substr(0, capability.find_first_not_of("0123456789."));
  std::string_view suffix = capability.substr(base.size());
  bool known = std::find(kKnown.begin(), kKnown.end(), base) != kKnown.end() &&
               (suffix.empty() || suffix == "a" || suffix == "f");
  if (!arch.ok() || !known) {
    return InvalidArgument("'" + std::string(capability) +
                           "' is not a CUDA arch nvcc can build for; give compute capabilities such as 8.0, 8.6, "
                           "8.9, 9.0, 10.0, 12.0 (an a or f suffix for arch-specific code: 9.0a)");
  }
  return arch;
}

}  // namespace gpuctl::build
