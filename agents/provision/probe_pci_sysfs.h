// NVIDIA GPUs from /sys/bus/pci/devices when lspci (pciutils) is not
// installed, as on a minimal Debian: the same ids, without the names.
#pragma once

#include <vector>

#include "agents/provision/probe_lspci.h"
#include "agents/sys/host_fs.h"

namespace gpuctl::provision {

// Each device directory's vendor ("0x10de"), device ("0x2335"), class
// ("0x030200": base 03 display, sub 02 3D) and revision ("0xa1"). Only NVIDIA
// display-class functions, as ParseLspciNvidiaGpus keeps; `name` is empty (the
// names live in pci.ids, which lspci reads). Unreadable devices are skipped.
std::vector<PciDevice> ReadSysfsNvidiaGpus(const sys::HostFs& fs);

}  // namespace gpuctl::provision
