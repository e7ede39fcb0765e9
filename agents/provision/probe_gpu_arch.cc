#include "agents/provision/probe_gpu_arch.h"

#include <array>
#include <cctype>

namespace gpuctl::provision {
namespace {

struct ChipFamily {
  std::string_view prefix;  // matched against the start of the chip word
  std::string_view compute_capability;
};

// Longer (more specific) prefixes first: GA100 before GA10x. Sources: CUDA
// C Programming Guide's compute capability table and the chip names in pci.ids.
constexpr std::array kChipFamilies = {
    ChipFamily{"GV100", "7.0"},  // Volta V100
    ChipFamily{"TU1", "7.5"},    // Turing T4, RTX 20xx
    ChipFamily{"GA100", "8.0"},  // Ampere A100, A30
    ChipFamily{"GA10", "8.6"},   // Ampere A10, A40, RTX 30xx
    ChipFamily{"AD10", "8.9"},   // Ada L4, L40S, RTX 40xx
    ChipFamily{"GH100", "9.0"},  // Hopper H100, H200, GH200
    ChipFamily{"GB100", "10.0"}, // Blackwell B200
    ChipFamily{"GB102", "10.0"},
    ChipFamily{"GB20", "12.0"},  // Blackwell RTX 50xx, RTX PRO 6000
};

}  // namespace

std::string ComputeCapabilityFromPciName(std::string_view name) {
  constexpr std::string_view kVendor = "NVIDIA Corporation ";
  if (name.substr(0, kVendor.size()) == kVendor) name.remove_prefix(kVendor.size());
  std::string_view chip = name.substr(0, name.find(' '));
  for (const ChipFamily& family : kChipFamilies) {
    if (chip.substr(0, family.prefix.size()) == family.prefix) return std::string(family.compute_capability);
  }
  return "";
}

std::string NormalizePciAddress(std::string_view address) {
  std::string out;
  for (char c : address) out += static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  // Domain, bus, device.function: "dddddddd:bb:dd.f" has two colons.
  size_t first = out.find(':');
  if (first != std::string::npos && out.find(':', first + 1) != std::string::npos) {
    while (first > 4 && out[0] == '0') {  // only zeros: VMD domains (10000) stay as they are
      out.erase(0, 1);
      --first;
    }
  } else if (first != std::string::npos && out.find(':', first + 1) == std::string::npos) {
    out.insert(0, "0000:");  // "17:00.0" without a domain
  }
  return out;
}

}  // namespace gpuctl::provision
