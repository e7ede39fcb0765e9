// The facts about a host that the plan and its steps decide on: OS (for the
// CUDA apt repository), where it runs (a container, a Proxmox host), the loaded
// NVIDIA kernel module, the GPUs' archs and the memory and CPUs a build gets.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "agents/provision/host_probe.h"
#include "agents/sys/host_fs.h"

namespace gpuctl::provision {

struct PlanFacts {
  std::string os_id;          // "ubuntu", "debian" (os-release ID)
  std::string os_version_id;  // "24.04", "12"
  std::string machine = "x86_64";
  // In a container of any kind (LXC, Docker, Podman...; sys::WhereRunning):
  // the guest plan, user space only, never a kernel module or headers.
  bool container_guest = false;
  bool proxmox_host = false;
  std::string kernel_release;            // uname -r; empty when unknown
  bool kernel_headers_installed = false;  // for that kernel: the driver's DKMS build needs them
  // From /proc/driver/nvidia/version: "590.44.01"; nullopt when no module is loaded.
  std::optional<std::string> kernel_module_version;
  bool kernel_module_open = false;
  // The user space that answers for it (NVML, nvidia-smi): "590.44.01"; equal
  // to the module's version on a working driver. Empty when unknown.
  std::string driver_library_version;
  // UEFI Secure Boot is on: a DKMS-built module loads only with an enrolled key.
  bool secure_boot = false;
  std::vector<std::string> compute_capabilities;  // "9.0", one per GPU
  // GPUs whose compute capability is known neither from a driver nor from
  // gpuctl's tables: "0000:17:00.0 [10de:2f99] NVIDIA Corporation Device 2f99".
  // The driver plan refuses them rather than guess a kernel module.
  std::vector<std::string> unidentified_gpus;
  uint64_t mem_available_bytes = 0;
  uint32_t cpus = 0;
  // Toolkits at /usr/local/cuda-X.Y whatever installed them (NVIDIA's
  // runfile leaves no package): "13.0".
  std::vector<std::string> cuda_toolkit_versions;
  // The system's python3 ("3.11.2"); empty when there is none or it is not
  // known (inside a container).
  std::string system_python;
};

// The facts the plan needs, from the host probe (host_probe.h).
PlanFacts FactsFromProbe(const HostProbe& probe);

// For steps that run inside a Proxmox container: the container's OS (from its
// root filesystem) with the host's kernel module, GPUs, memory and CPUs.
PlanFacts ContainerFacts(const PlanFacts& host, const sys::HostFs& container_root);

}  // namespace gpuctl::provision
