// What a provisioning run is asked to do (the plain form of ProvisionRequest)
// and the agent's provisioning settings, with all defaults in one place.
#pragma once

#include <chrono>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "common/status.h"

namespace gpuctl::provision {

inline constexpr std::string_view kStepPassthrough = "passthrough";
inline constexpr std::string_view kStepDriver = "driver";
inline constexpr std::string_view kStepCuda = "cuda";
inline constexpr std::string_view kStepVenv = "venv";
inline constexpr std::string_view kStepTorch = "torch";
inline constexpr std::string_view kStepExt = "ext";

// The order steps run in: each needs the ones before it (torch needs the
// toolkit to pick its wheel index, ext needs torch). passthrough is added by
// the plan, never asked for.
const std::vector<std::string>& StepOrder();

struct ProvisionOptions {
  std::vector<std::string> steps;  // empty: driver, cuda, venv, torch (+ ext when set)
  bool dry_run = false;
  std::string cuda_version;   // "13.1"
  std::string torch_version;  // "2.10.0"
  std::string venv_path;      // absolute
  std::string ext;            // a pip package name: "flash-attn"
  std::string container;      // Proxmox LXC VMID
  std::string driver_branch;  // "580"; empty: the default branch (driver_branches.h)
  bool replace_driver = false;        // a driver in use may be replaced (CUDA jobs break until the reboot)
  bool secure_boot_enrolled = false;  // the DKMS signing key is enrolled: install under Secure Boot
  std::string torch_index;    // a wheel index URL (a mirror); empty: PyTorch's index for the CUDA
  bool allow_insecure_index = false;  // an http:// torch_index is accepted (the plan says so)
  bool cuda_unlisted = false;  // a cuda_version newer than the known releases is tried (apt is the judge)
  // The ext step builds `ext` from here (a source directory or sdist on the
  // target, absolute), not from the package index; `ext` still names the
  // module it checks by importing.
  std::string ext_source;
};

struct ProvisionConfig {
  // STATE_DIR: progress is kept in STATE_DIR/provision/state.json.
  std::string state_dir = "/var/lib/gpuctl";
  // Where the host's /etc, /proc and /dev are read and /etc/profile.d is
  // written: "/" for real, a temp dir in tests.
  std::string system_root = "/";
  // A running container's root filesystem as the host sees it ({vmid} replaced).
  std::string lxc_rootfs_template = "/var/lib/lxc/{vmid}/rootfs";
  std::string pct = "pct";
  std::string default_cuda = "13.1";
  std::string default_torch = "2.10.0";
  std::string default_venv = "/opt/gpuctl/venv";
  std::string python_version = "3.12";
  // Read-only check commands are quick; installs and builds are not.
  std::chrono::milliseconds check_timeout{std::chrono::seconds(60)};
  std::chrono::milliseconds apply_timeout{std::chrono::minutes(30)};
  std::chrono::milliseconds build_timeout{std::chrono::hours(4)};
  // The memory guard's reserve: an extension build's budget leaves it free.
  uint64_t guard_reserve_bytes = 0;
};

// Whether an index URL is plain http:// (not TLS).
bool IsPlainHttp(std::string_view url);

// Fills defaults, checks every value and puts the steps in StepOrder().
// Errors: kInvalidArgument saying which value is wrong and what is accepted.
Result<ProvisionOptions> NormalizeOptions(ProvisionOptions options, const ProvisionConfig& config);

}  // namespace gpuctl::provision
