#include "agents/provision/probe_gpu_arch.h"

#include <array>
#include <cctype>
#include <cstdint>

namespace gpuctl::provision {
namespace {

struct ChipFamily {
  std::string_view prefix;  // matched against the start of the chip word
  std::string_view compute_capability;
};

// Longer (more specific) prefixes first: GA100 before GA10x. Sources: CUDA
// C Programming Guide's compute capability table and the chip names in pci.ids.
constexpr std::array kChipFamilies = {
    ChipFamily{"GK210", "3.7"},  // Kepler K80 (before GK2: GK208 is 3.5)
    ChipFamily{"GK20", "3.5"},   // Kepler GK208
    ChipFamily{"GK110", "3.5"},  // Kepler K20, K40 (GK110, GK110B)
    ChipFamily{"GK180", "3.5"},  // Kepler K40c
    ChipFamily{"GK10", "3.0"},   // Kepler K10, GRID K1/K2 (GK104, GK106, GK107)
    ChipFamily{"GM20", "5.2"},   // Maxwell M40, M60, M4 (GM200, GM204, GM206)
    ChipFamily{"GM10", "5.0"},   // Maxwell M10 (GM107, GM108)
    ChipFamily{"GP100", "6.0"},  // Pascal P100
    ChipFamily{"GP10", "6.1"},   // Pascal P40, P4, P6 (GP102-GP108)
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

// Device ids, for a device lspci could not name ("Device 2335": an old
// pci.ids). NVIDIA numbers each chip's boards in one block, so a block per
// chip covers its boards; a block is only listed where every id in pci.ids
// (the PCI ID Repository, pci-ids.ucw.cz, checked 2026-12) that falls in it
// is that chip's. An id in none is unknown: the plan refuses it rather than
// guess a kernel module. Exceptions inside a block come first.
struct DeviceBlock {
  uint32_t first, last;
  std::string_view compute_capability;
  std::string_view chip;
};
constexpr std::array kDeviceBlocks = {
    DeviceBlock{0x102D, 0x102D, "3.7", "GK210"},         // Tesla K80, inside GK110's block
    DeviceBlock{0x0FC0, 0x0FFF, "3.0", "GK107"},
    DeviceBlock{0x1001, 0x103F, "3.5", "GK110/GK180"},   // K20, K40
    DeviceBlock{0x1180, 0x11FF, "3.0", "GK104/GK106"},   // K10, GRID K2
    DeviceBlock{0x1280, 0x12BF, "3.5", "GK208"},
    DeviceBlock{0x1340, 0x13BF, "5.0", "GM107/GM108"},   // Tesla M10
    DeviceBlock{0x174D, 0x174E, "5.0", "GM108"},
    DeviceBlock{0x1789, 0x1789, "5.0", "GM107"},
    DeviceBlock{0x179C, 0x179C, "5.0", "GM107"},
    DeviceBlock{0x13C0, 0x143F, "5.2", "GM204/GM206"},   // Tesla M60, M6, M4
    DeviceBlock{0x17C0, 0x17FF, "5.2", "GM200"},         // Tesla M40
    DeviceBlock{0x15F0, 0x15FF, "6.0", "GP100"},         // Tesla P100
    DeviceBlock{0x1B00, 0x1D5F, "6.1", "GP102-GP108"},   // Tesla P40, P4, P6
    DeviceBlock{0x1D80, 0x1DFF, "7.0", "GV100"},         // Tesla V100, V100S
    DeviceBlock{0x1E00, 0x1FFF, "7.5", "TU102-TU117"},   // Tesla T4
    DeviceBlock{0x2180, 0x21FF, "7.5", "TU116"},
    DeviceBlock{0x20B0, 0x20FF, "8.0", "GA100"},         // A100, A30, A800
    DeviceBlock{0x2200, 0x22FF, "8.6", "GA102"},         // A10, A40
    DeviceBlock{0x2300, 0x234F, "9.0", "GH100"},         // H100, H200, H800, H20, GH200
    DeviceBlock{0x2400, 0x25FF, "8.6", "GA103-GA107"},   // A16, A2
    DeviceBlock{0x2680, 0x28FF, "8.9", "AD102-AD107"},   // L40, L40S, L4
    DeviceBlock{0x2900, 0x29FF, "10.0", "GB100/GB102"},  // B200, GB200
    DeviceBlock{0x2B00, 0x2FFF, "12.0", "GB202-GB207"},  // RTX PRO 6000, RTX 50xx
};

}  // namespace

std::string ComputeCapabilityFromPciDeviceId(std::string_view device_id) {
  if (device_id.empty() || device_id.size() > 4) return "";
  uint32_t id = 0;
  for (char c : device_id) {
    const int digit = std::isdigit(static_cast<unsigned char>(c))             ? c - '0'
                      : (c >= 'a' && c <= 'f')                                ? c - 'a' + 10
                      : (c >= 'A' && c <= 'F')                                ? c - 'A' + 10
                                                                              : -1;
    if (digit < 0) return "";
    id = id * 16 + static_cast<uint32_t>(digit);
  }
  for (const DeviceBlock& block : kDeviceBlocks) {
    if (id >= block.first && id <= block.last) return std::string(block.compute_capability);
  }
  return "";
}

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
