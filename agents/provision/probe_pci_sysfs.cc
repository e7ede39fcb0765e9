#include "agents/provision/probe_pci_sysfs.h"

#include <cctype>
#include <optional>
#include <string>

#include "agents/sys/directory_listing.h"
#include "agents/sys/text_fields.h"

namespace gpuctl::provision {
namespace {

constexpr const char* kDevicesDir = "sys/bus/pci/devices";

// "0x10de\n" -> "10de" when it is `digits` hex digits, lower case.
std::optional<std::string> HexField(const sys::HostFs& fs, const std::string& device, const char* file,
                                    size_t digits) {
  Result<std::string> text = fs.ReadFile(std::string(kDevicesDir) + "/" + device + "/" + file);
  if (!text.ok()) return std::nullopt;
  std::string_view value = sys::Trim(*text);
  if (!value.starts_with("0x") || value.size() != digits + 2) return std::nullopt;
  std::string hex;
  for (char c : value.substr(2)) {
    if (!std::isxdigit(static_cast<unsigned char>(c))) return std::nullopt;
    hex.push_back(static_cast<char>(std::tolower(static_cast<unsigned char>(c))));
  }
  return hex;
}

}  // namespace

std::vector<PciDevice> ReadSysfsNvidiaGpus(const sys::HostFs& fs) {
  std::vector<PciDevice> gpus;
  for (const std::string& address : sys::ListDirectoryNames(fs.Path(kDevicesDir))) {
    std::optional<std::string> vendor = HexField(fs, address, "vendor", 4);
    std::optional<std::string> class_code = HexField(fs, address, "class", 6);
    std::optional<std::string> device = HexField(fs, address, "device", 4);
    if (!vendor || !class_code || !device || *vendor != kNvidiaPciVendor || !class_code->starts_with("03")) continue;
    PciDevice gpu;
    gpu.address = address;
    gpu.class_code = class_code->substr(0, 4);  // base and sub class, as lspci -nn prints them
    gpu.vendor_id = *vendor;
    gpu.device_id = *device;
    gpu.revision = HexField(fs, address, "revision", 2).value_or("");
    gpus.push_back(std::move(gpu));
  }
  return gpus;
}

}  // namespace gpuctl::provision
