#include "agents/provision/plan_facts.h"

#include <map>

#include "agents/sys/proc_parsers.h"

namespace gpuctl::provision {

PlanFacts FactsFromProbe(const HostProbe& probe) {
  PlanFacts facts;
#if defined(__aarch64__)
  facts.machine = "aarch64";
#endif
  facts.os_id = probe.os_id;
  facts.os_version_id = probe.os_version_id;
  facts.container_guest = probe.where.container();
  facts.proxmox_host = probe.proxmox_host;
  facts.kernel_release = probe.kernel_release;
  facts.kernel_headers_installed = probe.kernel_headers_installed;
  if (probe.driver_module) {
    facts.kernel_module_version = probe.driver_module->version;
    facts.kernel_module_open = probe.driver_module->open;
  }
  facts.driver_library_version = probe.driver_library_version;
  facts.secure_boot = probe.secure_boot;
  for (const ProbedGpu& gpu : probe.gpus) {
    if (!gpu.compute_capability.empty()) {
      facts.compute_capabilities.push_back(gpu.compute_capability);
    } else {
      facts.unidentified_gpus.push_back(gpu.pci_address + " [" + gpu.vendor_id + ":" + gpu.device_id + "] " + gpu.name);
    }
  }
  for (const CudaToolkit& toolkit : probe.cuda_toolkits) {
    // Only where CUDA_HOME would point: a distribution's /usr/bin/nvcc is not one.
    if (toolkit.path == "/usr/local/cuda-" + toolkit.version) facts.cuda_toolkit_versions.push_back(toolkit.version);
  }
  facts.mem_available_bytes = probe.mem_available_bytes;
  facts.cpus = probe.cpus;
  facts.system_python = probe.python_version;
  return facts;
}

PlanFacts ContainerFacts(const PlanFacts& host, const sys::HostFs& container_root) {
  PlanFacts facts = host;
  facts.container_guest = true;
  facts.proxmox_host = false;
  auto os_text = container_root.ReadFile("etc/os-release");
  if (!os_text.ok()) os_text = container_root.ReadFile("usr/lib/os-release");
  std::map<std::string, std::string> os;
  if (os_text.ok()) os = sys::ParseOsRelease(*os_text);
  facts.os_id = os["ID"];
  facts.os_version_id = os["VERSION_ID"];
  return facts;
}

}  // namespace gpuctl::provision
