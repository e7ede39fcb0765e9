// NVIDIA GPUs on the PCI bus from `lspci -nn -D`, found with or without a
// driver loaded. Pure: text in, devices out.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace gpuctl::provision {

// One line of `lspci -nn [-D]`:
//   0000:17:00.0 3D controller [0302]: NVIDIA Corporation GH100 [H200 SXM 141GB] [10de:2335] (rev a1)
//   ADDRESS CLASS-NAME [CLASS]: NAME [VENDOR:DEVICE] [(rev RR)] [(prog-if PP [NAME])]
// The name itself may contain brackets, so the ids are the last bracketed
// pair before the trailing parenthesised groups.
struct PciDevice {
  std::string address;     // "0000:17:00.0" (a domain is added when lspci printed none)
  std::string class_name;  // "3D controller"
  std::string class_code;  // "0302"
  std::string name;        // "NVIDIA Corporation GH100 [H200 SXM 141GB]"
  std::string vendor_id;   // "10de"
  std::string device_id;   // "2335"
  std::string revision;    // "a1"; empty when not printed
};

// nullopt for a line that does not follow the grammar above.
std::optional<PciDevice> ParseLspciLine(std::string_view line);

inline constexpr std::string_view kNvidiaPciVendor = "10de";

// The NVIDIA display-class devices (class 03xx: VGA 0300, 3D 0302, display
// 0380) of a whole `lspci -nn -D` output; their audio functions, NVSwitch
// bridges and other vendors are left out.
std::vector<PciDevice> ParseLspciNvidiaGpus(std::string_view text);

}  // namespace gpuctl::provision
