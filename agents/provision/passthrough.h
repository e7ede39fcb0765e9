// A Proxmox container's GPU passthrough, checked line by line against its
// config (/etc/pve/lxc/VMID.conf): the device cgroup must allow each NVIDIA
// major (nvidia 195, nvidia-uvm and nvidia-caps from /proc/devices) and each
// /dev/nvidia* node of the host must be bind-mounted in. Pure: parsing and
// comparing only; the passthrough step reads the files.
#pragma once

#include <map>
#include <string>
#include <string_view>
#include <vector>

namespace gpuctl::provision {

// Character-device majors by name from /proc/devices ("195 nvidia-frontend"
// is listed as nvidia too, under both names).
std::map<std::string, int> ParseCharDeviceMajors(std::string_view proc_devices);

struct PassthroughInput {
  std::string container_config;       // VMID.conf
  std::string proc_devices;           // the host's /proc/devices
  std::vector<std::string> dev_nodes; // the host's /dev/nvidia* names: nvidia0, nvidiactl, nvidia-uvm, nvidia-caps
};

// The exact lines the config lacks, in the order to paste them: cgroup
// allows first, then mount entries. A `devN: /dev/nvidia0` entry (Proxmox 8)
// covers its node, and `lxc.cgroup2.devices.allow: a` every major.
// /dev/nvidia-uvm is always wanted (CUDA needs it), even before the host
// loaded nvidia_uvm and made the node.
std::vector<std::string> MissingPassthroughLines(const PassthroughInput& input);

// nvidia_uvm is not loaded on the host (no nvidia-uvm in /proc/devices): its
// major, and so its cgroup line, cannot be known yet.
bool UvmNotLoaded(const PassthroughInput& input);

}  // namespace gpuctl::provision
