// NVIDIA GPUs by PCI id (before any driver exists), the loaded kernel module
// against the user-space library, and the archs to build CUDA code for.
#include <algorithm>

#include "agents/provision/max_jobs_estimate.h"
#include "agents/provision/probe_context.h"
#include "agents/provision/probe_gpu_arch.h"
#include "agents/provision/probe_lspci.h"
#include "agents/provision/probe_pci_sysfs.h"
#include "agents/sys/directory_listing.h"

namespace gpuctl::provision {
namespace {

// Where distributions and NVIDIA's .run installer put libnvidia-ml.so.VERSION.
constexpr const char* kLibraryDirs[] = {"usr/lib/x86_64-linux-gnu", "usr/lib/aarch64-linux-gnu", "usr/lib64",
                                        "usr/lib"};

void ProbePciGpus(ProbeContext& ctx) {
  std::optional<sys::CommandOutput> lspci = ctx.Run({"lspci", "-nn", "-D"}, ProbeContext::NoteFailure::kUnlessMissing);
  std::vector<PciDevice> devices;
  if (lspci) {
    devices = ParseLspciNvidiaGpus(lspci->stdout_text);
    if (devices.empty()) ctx.Note("lspci lists no NVIDIA GPU");
  } else {
    devices = ReadSysfsNvidiaGpus(ctx.fs);
    ctx.Note(devices.empty() ? "no NVIDIA GPU in /sys/bus/pci/devices (lspci, package pciutils, is not installed)"
                             : "lspci is not installed (package pciutils): GPUs read from /sys/bus/pci without names");
  }
  for (PciDevice& device : devices) {
    ctx.probe.gpus.push_back({.pci_address = device.address, .pci_class = device.class_code,
                              .vendor_id = device.vendor_id, .device_id = device.device_id,
                              .name = device.name, .compute_capability = ""});
  }
  // An LXC guest often sees no PCI bus, while the driver sees the passed-through GPUs.
  for (const auto& [address, capability] : ctx.options.driver.compute_capability_by_pci) {
    bool listed = std::any_of(ctx.probe.gpus.begin(), ctx.probe.gpus.end(),
                              [&](const ProbedGpu& gpu) { return NormalizePciAddress(gpu.pci_address) == address; });
    if (listed) continue;
    ProbedGpu gpu;
    gpu.pci_address = address;
    gpu.vendor_id = std::string(kNvidiaPciVendor);
    ctx.probe.gpus.push_back(std::move(gpu));
  }
}

void FillComputeCapabilities(ProbeContext& ctx) {
  for (ProbedGpu& gpu : ctx.probe.gpus) {
    auto from_driver = ctx.options.driver.compute_capability_by_pci.find(NormalizePciAddress(gpu.pci_address));
    if (from_driver != ctx.options.driver.compute_capability_by_pci.end()) {
      gpu.compute_capability = from_driver->second;
    } else {
      gpu.compute_capability = ComputeCapabilityFromPciName(gpu.name);
      if (gpu.compute_capability.empty()) gpu.compute_capability = ComputeCapabilityFromPciDeviceId(gpu.device_id);
    }
    if (gpu.compute_capability.empty()) {
      ctx.Note("compute capability of " + gpu.pci_address + " (" + gpu.vendor_id + ":" + gpu.device_id +
               ") unknown: no driver to ask and its chip is not in the table");
      continue;
    }
    Result<std::string> arch = ArchFromComputeCapability(gpu.compute_capability);
    if (!arch.ok()) {
      ctx.Note(arch.status().message());
    } else if (std::find(ctx.probe.gpu_archs.begin(), ctx.probe.gpu_archs.end(), *arch) == ctx.probe.gpu_archs.end()) {
      ctx.probe.gpu_archs.push_back(*arch);
    }
  }
}

void ProbeKernelModule(ProbeContext& ctx) {
  Result<std::string> text = ctx.fs.ReadFile("proc/driver/nvidia/version");
  if (!text.ok()) {
    ctx.Note("no NVIDIA kernel module loaded (/proc/driver/nvidia/version absent)");
    return;
  }
  ctx.probe.driver_module = ParseNvidiaKernelModule(*text);
  if (!ctx.probe.driver_module) {
    ctx.Note(ctx.fs.Path("proc/driver/nvidia/version") + " has no 'NVRM version:' line with a version");
  }
}

std::string LibraryVersionFromFiles(const ProbeContext& ctx) {
  for (const char* dir : kLibraryDirs) {
    for (const std::string& name : sys::ListDirectoryNames(ctx.fs.Path(dir))) {
      if (std::optional<std::string> version = NvmlLibraryVersionFromFileName(name)) return *version;
    }
  }
  return "";
}

void ProbeLibrary(ProbeContext& ctx) {
  std::string& version = ctx.probe.driver_library_version;
  version = ctx.options.driver.library_version;
  if (version.empty()) {
    std::optional<sys::CommandOutput> smi = ctx.Run({"nvidia-smi", "--query-gpu=driver_version", "--format=csv,noheader"},
                                                    ProbeContext::NoteFailure::kUnlessMissing);
    if (smi) version = ParseNvidiaSmiDriverVersion(smi->stdout_text).value_or("");
  }
  // nvidia-smi refuses to run on a mismatch; the library's file name still tells.
  if (version.empty()) version = LibraryVersionFromFiles(ctx);
  if (version.empty()) {
    ctx.Note("no NVIDIA user-space driver library (libnvidia-ml.so) found");
    return;
  }
  const std::optional<NvidiaKernelModule>& module = ctx.probe.driver_module;
  if (module && module->version != version) {
    ctx.probe.driver_version_mismatch = true;
    ctx.Note("driver mismatch: kernel module " + module->version + ", user-space library " + version +
             ": reboot (or reload the nvidia modules) so that they match");
  }
}

}  // namespace

void ProbeGpus(ProbeContext& ctx) {
  ProbePciGpus(ctx);
  ProbeKernelModule(ctx);
  ProbeLibrary(ctx);
  FillComputeCapabilities(ctx);
}

}  // namespace gpuctl::provision
