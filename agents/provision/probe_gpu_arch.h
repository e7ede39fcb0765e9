// A GPU's compute capability when the driver cannot be asked (not installed
// yet: the usual state before provisioning). pci.ids names every NVIDIA
// device after its chip ("GH100 [H200 SXM 141GB]"), and the chip fixes the
// compute capability, so a short table of chip families covers every board
// of a generation without listing device ids.
#pragma once

#include <string>
#include <string_view>

namespace gpuctl::provision {

// "NVIDIA Corporation GH100 [H200 SXM 141GB]" (or "GH100 [H200 SXM 141GB]")
// -> "9.0". Empty for an unknown chip or a name lspci could not resolve
// ("Device 2335" with an old pci.ids).
std::string ComputeCapabilityFromPciName(std::string_view name);

// The same from the PCI device id ("2335", any case), for a device whose name
// lspci could not resolve. Empty for an id in no known chip's block.
std::string ComputeCapabilityFromPciDeviceId(std::string_view device_id);

// A PCI address in one spelling for matching lspci ("0000:17:00.0") with
// NVML/nvidia-smi ("00000000:17:00.0"): lower case, a four-digit domain.
std::string NormalizePciAddress(std::string_view address);

}  // namespace gpuctl::provision
