#include "agents/provision/driver_plan.h"

#include <algorithm>

#include "agents/provision/cuda_repo_actions.h"
#include "agents/provision/driver_branches.h"
#include "agents/sys/text_fields.h"

namespace gpuctl::provision {
namespace {

using sys::Join;

StepAction WriteFileAction(std::string_view path, std::string content) {
  StepAction write;
  write.write_path = std::string(path);
  write.content = std::move(content);
  return write;
}

std::string SourceName(DriverSource source) {
  switch (source) {
    case DriverSource::kNvidiaRepo: return "NVIDIA's CUDA repository";
    case DriverSource::kDistro: return "the distribution's packages";
    case DriverSource::kRunfile: return "NVIDIA's .run installer";
    case DriverSource::kNone: break;
  }
  return "an unknown source";
}

// The running kernel's headers package when they are missing:
// proxmox-headers-RELEASE on Proxmox VE, linux-headers-RELEASE elsewhere.
std::optional<std::string> MissingHeaders(const PlanFacts& facts) {
  const std::string& release = facts.kernel_release;
  if (facts.kernel_headers_installed || release.empty()) return std::nullopt;
  if (release.find_first_not_of("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789.+-") !=
      std::string::npos) {
    return std::nullopt;  // not a package-name part: left for DKMS to report
  }
  return (facts.proxmox_host ? "proxmox-headers-" : "linux-headers-") + release;
}

std::string SecureBootSteps(const PlanFacts& facts) {
  const bool ubuntu = facts.os_id == "ubuntu";
  std::string key = ubuntu ? "/var/lib/shim-signed/mok/MOK.der" : "/var/lib/dkms/mok.pub";
  std::string make_key = ubuntu ? "update-secureboot-policy --new-key" : "dkms generate_mok";
  return "Secure Boot is on: the driver's module is built by DKMS on this host and the kernel loads it only "
         "once its signing key is enrolled in the firmware (MOK). Enrol the key first, at the console:\n"
         "  1. " + make_key + "   (creates " + key + " if it is missing)\n"
         "  2. mokutil --import " + key + "   (choose a one-time password)\n"
         "  3. reboot; in the blue MOK manager: Enroll MOK, Continue, Yes, the password\n"
         "  4. rerun with --secure-boot-enrolled\n"
         "Or turn Secure Boot off in the firmware.";
}

// Debian's contrib, before apt-get update: NVIDIA's Debian driver packages need it.
void AddContrib(const PlanFacts& facts, const DriverState& state, DriverPlan& plan, std::vector<StepAction>& actions) {
  if (facts.os_id != "debian" || state.contrib_enabled || state.contrib_list.empty()) return;
  actions.push_back(WriteFileAction(kContribListPath, state.contrib_list));
  plan.notes.push_back("contrib enabled in " + std::string(kContribListPath) +
                       ": NVIDIA's Debian driver packages need it");
}

// On Proxmox, nvidia_uvm at boot: wanted whatever happens to the driver itself.
void AddUvmAtBoot(const PlanFacts& facts, const DriverState& state, DriverPlan& plan) {
  if (facts.proxmox_host && !state.uvm_at_boot) {
    plan.actions.push_back(WriteFileAction(kUvmModulesLoadPath, UvmModulesLoadContent()));
    plan.actions.push_back(WriteFileAction(kUvmUdevRulePath, UvmUdevRuleContent()));
    plan.notes.push_back("nvidia_uvm is loaded at every boot, with /dev/nvidia-uvm made for it: containers "
                         "need that device and it exists only once the module is loaded");
  }
}

Status CheckFlavourFits(const GpuModuleNeeds& needs, int branch, const std::vector<std::string>& capabilities) {
  if (needs.before_turing && needs.blackwell) {
    return Refusal("no NVIDIA kernel module drives these GPUs together (compute capabilities " +
                   Join(capabilities, ", ") +
                   "): the GPUs before Turing need the proprietary modules, Blackwell needs the open ones. "
                   "Put them in different hosts");
  }
  if (needs.before_turing && branch > kLastBranchBeforeTuring) {
    return Refusal("--driver-branch " + std::to_string(branch) +
                   " cannot drive GPUs before Turing (compute capability < 7.5, here " + Join(capabilities, ", ") +
                   "): the 580 branch is the last for Maxwell, Pascal and Volta. Use --driver-branch 580 (the "
                   "default)");
  }
  // Each GPU's generation bounds the branch: none older than the one that
  // drives all its boards, none past its last (Kepler's is 470).
  for (const std::string& capability : capabilities) {
    std::optional<BranchSpan> span = BranchSpanFor(capability);
    if (!span) continue;
    const std::string gpus = "the " + std::string(span->generation) + " GPUs here (compute capability " + capability + ")";
    if (span->newest && branch > *span->newest) {
      return Refusal("the " + std::to_string(branch) + " driver branch does not drive " + gpus + ": the " +
                     std::to_string(*span->newest) + " branch is the last that does. Use --driver-branch " +
                     std::to_string(*span->newest));
    }
    if (branch < span->oldest) {
      return Refusal("--driver-branch " + std::to_string(branch) + " does not drive " + gpus +
                     ": the oldest branch that does is " + std::to_string(span->oldest) + ". Use --driver-branch " +
                     std::to_string(span->oldest) + " or later, or leave it out for " +
                     std::to_string(kDefaultDriverBranch));
    }
  }
  return Status::Ok();
}

}  // namespace

DriverRequest DriverRequestOf(const ProvisionOptions& options) {
  DriverRequest request;
  request.branch_given = !options.driver_branch.empty();
  request.branch = request.branch_given ? DriverBranchOf(options.driver_branch).value_or(0) : 0;
  request.replace_driver = options.replace_driver;
  request.secure_boot_enrolled = options.secure_boot_enrolled;
  return request;
}

std::string UvmModulesLoadContent() {
  return "# gpuctl: containers get /dev/nvidia-uvm only once nvidia_uvm is loaded\nnvidia\nnvidia_uvm\n";
}

std::string UvmUdevRuleContent() {
  // Loading the module does not make its device nodes; nvidia-modprobe does.
  return "# gpuctl: make /dev/nvidia-uvm and /dev/nvidia-uvm-tools when nvidia_uvm loads\n"
         "KERNEL==\"nvidia_uvm\", RUN+=\"/usr/bin/nvidia-modprobe -c0 -u\"\n";
}

std::string DriverPinPreferences(const std::string& version) {
  return "# gpuctl: NVIDIA's driver packages held at " + version +
         " (NVIDIA publishes no pinning package for this branch)\n"
         "Package: *nvidia* libcuda* libnvcuvid* libnvoptix* libxnvctrl* cuda-drivers*\n"
         "Pin: version " + version + "-*\n"
         "Pin-Priority: 1001\n";
}

Result<DriverPlan> PlanHostDriver(const PlanFacts& facts, const DriverState& state, const DriverRequest& request) {
  const int branch = request.branch > 0 ? request.branch : kDefaultDriverBranch;
  const GpuModuleNeeds needs = ModuleNeedsOf(facts.compute_capabilities);
  // A GPU of unknown generation may be one the open modules cannot drive:
  // refused, never a guess.
  if (!facts.unidentified_gpus.empty()) {
    return Refusal("cannot tell which NVIDIA kernel modules drive " + Join(facts.unidentified_gpus, ", ") +
                   ": no driver is loaded to ask, and gpuctl's table of NVIDIA chips "
                   "(agents/provision/probe_gpu_arch.cc) does not have its device id. Install a driver for it by "
                   "hand (a working driver is kept), or use a gpuctl that knows it");
  }
  if (Status s = CheckFlavourFits(needs, branch, facts.compute_capabilities); !s.ok()) return s;
  const std::string package = needs.before_turing ? "cuda-drivers" : "nvidia-open";
  const std::string flavour = needs.before_turing ? "proprietary modules (cuda-drivers): GPUs before Turing"
                                                  : "open modules (nvidia-open)";
  const std::string pinning = "nvidia-driver-pinning-" + std::to_string(branch);
  // Before 580 there is no pinning package: the same apt preferences, written.
  const bool pin_by_file = branch < kFirstBranchWithPinningPackage;
  const StepAction pin_file = WriteFileAction(kPinPreferencesPath, DriverPinPreferences(std::to_string(branch) + ".*"));
  const auto& module = facts.kernel_module_version;
  const bool working = module && facts.driver_library_version == *module;
  const std::optional<int> loaded_branch = module ? DriverBranchOf(*module) : std::nullopt;

  DriverPlan plan;
  AddUvmAtBoot(facts, state, plan);
  auto finish_kept = [&](std::string detail) {
    plan.detail = std::move(detail);
    plan.done = plan.actions.empty();
    return plan;
  };

  // 1. gpuctl's own install of this branch: done, though it may wait for a reboot.
  const bool ours = state.source == DriverSource::kNvidiaRepo && state.installed_package == package &&
                    DriverBranchOf(state.installed_version) == branch &&
                    DriverBranchOf(state.pinned) == branch;
  if (ours) {
    if (!module) {
      plan.reboot_required = true;
      plan.notes.push_back("reboot needed: " + package + " " + state.installed_version +
                           " is installed but no NVIDIA kernel module is loaded");
    } else if (*module != state.installed_version) {
      plan.reboot_required = true;
      plan.notes.push_back("reboot needed: the loaded kernel module is " + *module + ", the installed driver " +
                           state.installed_version);
    }
    return finish_kept(package + " " + state.installed_version + " installed, pinned to the " +
                       std::to_string(branch) + " branch");
  }

  // 2. A working driver from any source: kept unless another branch was asked for.
  if (working && loaded_branch && (*loaded_branch == branch || !request.branch_given)) {
    if (*loaded_branch != branch) {
      plan.notes.push_back("kept the working " + std::to_string(*loaded_branch) + " driver; --driver-branch " +
                           std::to_string(branch) + " --replace-driver installs the " + std::to_string(branch) +
                           " branch instead");
    }
    if (state.source == DriverSource::kNvidiaRepo && *loaded_branch == branch && state.pinned.empty()) {
      // Without the pin an upgrade moves to the newest branch.
      if (pin_by_file) {
        plan.actions.push_back(pin_file);
      } else {
        plan.actions.push_back(AptUpdate());
        plan.actions.push_back(AptInstall({pinning}));
      }
      plan.notes.push_back((pin_by_file ? std::string(kPinPreferencesPath) : pinning) + " keeps apt on the " +
                           std::to_string(branch) + " branch");
    }
    return finish_kept("NVIDIA driver " + *module + " (from " + SourceName(state.source) +
                       ") is loaded and its user space matches: kept");
  }

  // 3. Install, replacing what is there.
  if (module && !request.replace_driver) {
    std::string what = working ? "a working NVIDIA driver " + *module
                               : "NVIDIA kernel module " + *module + " (user space " +
                                     (facts.driver_library_version.empty() ? "unknown" : facts.driver_library_version) +
                                     ")";
    std::string users = state.cuda_processes.empty()
                            ? "no CUDA process runs now"
                            : std::to_string(state.cuda_processes.size()) + " CUDA processes run now: " +
                                  Join(state.cuda_processes, "; ");
    return Refusal("this host runs " + what + " from " + SourceName(state.source) + "; installing the " +
                   std::to_string(branch) + " branch replaces it, and new user space under the loaded module "
                   "breaks every CUDA job until the reboot (" + users + "). Keep it: rerun without "
                   "--driver-branch. Replace it: rerun with --replace-driver, then reboot");
  }
  if (facts.secure_boot && !request.secure_boot_enrolled) return Refusal(SecureBootSteps(facts));

  std::vector<StepAction> install;
  AddContrib(facts, state, plan, install);
  install.push_back(AptUpdate());
  if (std::optional<std::string> headers = MissingHeaders(facts)) {
    // Before the driver: its DKMS module build needs them, and without them
    // it "installs" with no module to load.
    install.push_back(AptInstall({*headers}));
    plan.notes.push_back("the driver's module is built for the running kernel " + facts.kernel_release + ": " +
                         *headers + " first");
  }
  // Any driver there (another branch from NVIDIA's repository too) is
  // replaced, which may be a downgrade.
  const bool replacing = state.source != DriverSource::kNone;
  if (state.source == DriverSource::kRunfile) {
    StepAction uninstall;
    uninstall.argv = {"nvidia-uninstall", "--silent"};
    install.push_back(uninstall);
  } else if (replacing && !state.packages.empty()) {
    StepAction purge = AptInstall({});
    purge.argv = {"apt-get", "purge", "-y"};
    purge.argv.insert(purge.argv.end(), state.packages.begin(), state.packages.end());
    install.push_back(purge);
  }
  if (replacing) {
    plan.notes.push_back("replaces the " + (state.installed_version.empty() ? std::string("installed")
                                                                            : state.installed_version) +
                         " driver from " + SourceName(state.source));
  }
  // The pinning package first: it is what makes apt choose the branch for
  // the driver and every package it pulls in.
  if (pin_by_file) {
    install.push_back(pin_file);
  } else {
    StepAction pin = AptInstall({pinning});
    if (replacing) pin.argv.insert(pin.argv.begin() + 3, "--allow-downgrades");
    install.push_back(pin);
  }
  StepAction driver = AptInstall({package});
  if (replacing) driver.argv.insert(driver.argv.begin() + 3, "--allow-downgrades");
  install.push_back(driver);
  plan.actions.insert(plan.actions.begin(), install.begin(), install.end());
  plan.notes.push_back("branch " + std::to_string(branch) +
                       (request.branch_given ? " (--driver-branch)"
                                             : " (the default, NVIDIA's long-term support branch, chosen " +
                                                   std::string(kDefaultDriverBranchChosen) + ")") +
                       ", " + flavour);
  if (module) {
    plan.reboot_required = true;
    plan.notes.push_back("reboot after this: the loaded module " + *module +
                         " stays until then, and CUDA jobs fail against the new user space");
  }
  plan.detail = package + " (" + std::to_string(branch) + " branch) is not installed";
  if (state.source == DriverSource::kNvidiaRepo && !state.installed_package.empty()) {
    plan.detail = state.installed_package + " " + state.installed_version + " is installed, not the " +
                  std::to_string(branch) + " branch's " + package + " pinned";
  }
  return plan;
}

std::string GuestPinningPackage(const std::string& version) {
  std::optional<int> branch = DriverBranchOf(version);
  if (!branch || *branch < kFirstBranchWithPinningPackage) return {};
  return "nvidia-driver-pinning-" + version;
}

std::vector<std::string> GuestDriverPackages(const PlanFacts& facts, const std::string& version) {
  if (facts.os_id != "ubuntu") return {"nvidia-driver-cuda"};
  int branch = DriverBranchOf(version).value_or(0);
  if (branch >= kFirstBranchWithUnversionedNames) {
    return {"libnvidia-compute", facts.kernel_module_open ? "nvidia-headless-no-dkms-open" : "nvidia-headless-no-dkms"};
  }
  return {"libnvidia-compute-" + std::to_string(branch), "nvidia-utils-" + std::to_string(branch)};
}

Result<DriverPlan> PlanGuestDriver(const PlanFacts& facts, const DriverState& state) {
  const auto& module = facts.kernel_module_version;
  if (!module) {
    return Refusal(
        "no NVIDIA kernel module is loaded on the host (/proc/driver/nvidia/version is missing); a container "
        "uses the host's module: install the driver on the Proxmox host first (gpuctl provision node "
        "--steps driver on the host), then rerun");
  }
  DriverPlan plan;
  std::vector<std::string> packages = GuestDriverPackages(facts, *module);
  std::vector<std::string> missing;
  for (const auto& [name, version] : state.guest_installed) {
    if (version != *module) {
      return Refusal("the container has NVIDIA user space " + version + " (" + name +
                     ") but the host's kernel module is " + *module +
                     ": CUDA would fail with \"Driver/library version mismatch\". Either remove it (apt-get "
                     "purge " + name + ") and rerun to install " + *module + ", or change the host's driver to " +
                     version);
    }
  }
  for (const std::string& p : packages) {
    if (!state.guest_installed.contains(p)) missing.push_back(p);
  }
  const std::string pinning = GuestPinningPackage(*module);
  if (missing.empty() && state.guest_pin_present) {
    plan.done = true;
    plan.detail = "user space " + *module + " installed and pinned, matching the host's kernel module";
    return plan;
  }
  plan.detail = missing.empty() ? "user space " + *module + " installed but not pinned"
                                : "user space " + *module + " not installed (" + Join(missing, ", ") + ")";
  AddContrib(facts, state, plan, plan.actions);
  if (pinning.empty()) plan.actions.push_back(WriteFileAction(kPinPreferencesPath, DriverPinPreferences(*module)));
  plan.actions.push_back(AptUpdate());
  // The pinning package for the module's exact version, then unversioned
  // names it resolves, and no recommends: they would pull in DKMS.
  if (!pinning.empty()) plan.actions.push_back(AptInstall({pinning}, true));
  plan.actions.push_back(AptInstall(packages, true));
  plan.notes.push_back("container: user space only, pinned to the host's kernel module " + *module + " (" +
                       (pinning.empty() ? std::string(kPinPreferencesPath) : pinning) +
                       "); no kernel module is installed");
  return plan;
}

bool PlansAsGuest(const PlanFacts& facts) { return facts.container_guest; }

std::optional<std::string> DriverForCuda(const PlanFacts& facts, const DriverRequest& request, bool driver_planned) {
  const auto& module = facts.kernel_module_version;
  if (PlansAsGuest(facts) || !driver_planned) return module;
  const int branch = request.branch > 0 ? request.branch : kDefaultDriverBranch;
  const bool working = module && facts.driver_library_version == *module;
  std::optional<int> loaded = module ? DriverBranchOf(*module) : std::nullopt;
  if (working && loaded && (*loaded == branch || !request.branch_given)) return module;
  return std::to_string(branch);
}

}  // namespace gpuctl::provision
