// What a host has, for planning its provisioning: the probe's result as a
// plain struct, and the collector that fills it. The collector reads files
// through sys::HostFs (rooted at an injectable path, so a fixture tree works)
// and runs programs through sys::CommandRunner, each with a timeout.
//
// For the plan and its steps (agents/provision/steps*), the fields to decide on:
//   - GPUs and archs:   gpus[].compute_capability ("9.0"), gpu_archs ({"90"},
//                       flash-attn's spelling; feed max_jobs_estimate.h).
//   - driver:           driver_module (the loaded kernel module: version and
//                       open/proprietary; nullopt when none is loaded; in an LXC
//                       guest this is the HOST's module, which the guest's user
//                       space must match exactly), driver_library_version,
//                       driver_version_mismatch.
//   - CUDA:             cuda_toolkits[].version ("13.0"), path.
//   - venv/torch:       venvs[].torch_version, venvs[].torch_cuda ("12.8": a
//                       major other than the toolkit's is the incident's mismatch).
//   - where it runs:    where (sys::DetectWhereRunning: a container of any kind
//                       gets the guest plan), proxmox_host (pct available), os_id/os_version_id
//                       (the CUDA apt repository is per distribution).
//   - build budget:     cpus, mem_available_bytes.
// Nothing here is an error: what could not be determined is empty/false and
// explained in `notes`.
#pragma once

#include <chrono>
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "agents/provision/probe_nvidia_driver.h"
#include "agents/sys/command_runner.h"
#include "agents/sys/host_fs.h"
#include "agents/sys/where_running.h"

namespace gpuctl::provision {

struct ProbedGpu {
  std::string pci_address;         // "0000:17:00.0"
  std::string pci_class;           // "0302"
  std::string vendor_id;           // "10de"
  std::string device_id;           // "2335"
  std::string name;                // "NVIDIA Corporation GH100 [H200 SXM 141GB]"
  std::string compute_capability;  // "9.0": from the driver, else the chip table; empty when unknown
};

struct CudaToolkit {
  std::string path;     // "/usr/local/cuda-13.0" (as on the host, without the HostFs root)
  std::string version;  // "13.0"
  std::string build;    // "V13.0.88"
};

struct PythonVenv {
  std::string path;            // "/opt/venv"
  std::string python_version;  // "3.12.3"; empty when its python did not run
  std::string torch_version;   // "2.11.0+cu130"; empty when torch is not installed
  std::string torch_cuda;      // "13.0"; empty for a CPU-only torch or no torch
};

struct HostProbe {
  std::string os_id;          // os-release ID: "debian", "ubuntu"
  std::string os_version_id;  // "12", "24.04"
  std::string os_pretty_name;
  std::string kernel_release;  // uname -r
  bool kernel_headers_installed = false;
  bool secure_boot = false;  // UEFI Secure Boot on (the SecureBoot EFI variable)
  uint32_t cpus = 0;
  uint64_t mem_total_bytes = 0;
  uint64_t mem_available_bytes = 0;
  std::vector<ProbedGpu> gpus;         // NVIDIA display devices on the PCI bus, driver or not
  std::vector<std::string> gpu_archs;  // distinct archs of `gpus`: {"90"}
  std::optional<NvidiaKernelModule> driver_module;
  std::string driver_library_version;  // user space: NVML, nvidia-smi or libnvidia-ml.so.VERSION
  bool driver_version_mismatch = false;  // module and library both known and different
  std::vector<CudaToolkit> cuda_toolkits;
  std::string uv_version;
  std::string python_version;  // system python3
  std::vector<PythonVenv> venvs;
  sys::WhereRunning where;  // the answer health gives too
  bool lxc_guest = false;   // where.kind is kLxc (the wire's older field)
  bool proxmox_host = false;
  std::string proxmox_version;  // first line of pveversion
  std::vector<std::string> notes;
};

// What the driver already told the agent (health's NVML / nvidia-smi
// reading), so the probe does not ask twice and can fill compute capabilities.
struct DriverReport {
  std::string library_version;                             // "580.159.04"; empty when unknown
  std::map<std::string, std::string> compute_capability_by_pci;  // NormalizePciAddress -> "9.0"
};

struct ProbeOptions {
  // Venvs to look into: these first, then the defaults. Paths on the host,
  // absolute; a missing one from the request gets a note, a missing default
  // does not.
  std::vector<std::string> venvs;
  std::vector<std::string> default_venvs = {"/opt/venv"};
  std::string home_dir;  // adds HOME/.venv, HOME/venv and HOME/.local/bin/uv when set
  // The PATH to find nvcc on (the agent's own, or a login shell's). Programs
  // without a path (lspci, uv, python3 ...) are found by the runner.
  std::string path_env;
  std::chrono::milliseconds command_timeout{10'000};
  // Importing torch from a cold cache takes seconds.
  std::chrono::milliseconds python_timeout{60'000};
  DriverReport driver;
};

// The SecureBoot EFI variable as efivarfs shows it: 4 bytes of attributes,
// then the value (1: on). nullopt when it is not that shape.
std::optional<bool> SecureBootFromEfiVar(std::string_view efivar);

class HostProber {
 public:
  // `defaults`: the agent's settings (home, PATH, timeouts) that each request
  // starts from.
  HostProber(const sys::HostFs& fs, sys::CommandRunner& runner, ProbeOptions defaults = {})
      : fs_(fs), runner_(runner), defaults_(std::move(defaults)) {}
  const ProbeOptions& defaults() const { return defaults_; }
  // Never fails: see `notes`. Runs programs, so it takes seconds: keep it off
  // threads that must not block.
  HostProbe Probe(const ProbeOptions& options) const;

 private:
  const sys::HostFs& fs_;
  sys::CommandRunner& runner_;
  ProbeOptions defaults_;
};

}  // namespace gpuctl::provision
