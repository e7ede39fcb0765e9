// The driver step's decisions as pure functions of facts: which branch and
// module flavour, what to keep, what to refuse, and the exact actions in
// order (contrib, apt-get update, headers, removal of another driver, the
// pinning package, the driver). The step (step_driver.cc) gathers the facts
// and runs the actions; the tests call these with tables of hosts.
#pragma once

#include <map>
#include <optional>
#include <string>
#include <vector>

#include "agents/provision/plan_facts.h"
#include "agents/provision/provision_options.h"
#include "agents/provision/step.h"

namespace gpuctl::provision {

// Where the driver that is on the host came from.
enum class DriverSource {
  kNone,
  kNvidiaRepo,  // nvidia-open or cuda-drivers from NVIDIA's CUDA repository
  kDistro,      // Ubuntu's nvidia-driver-580-open and friends, Debian's nvidia-driver
  kRunfile,     // NVIDIA's .run installer (nvidia-uninstall is on the host)
};

// What the driver step found, beyond PlanFacts.
struct DriverState {
  DriverSource source = DriverSource::kNone;
  std::string installed_version;       // user space of the installed driver: "580.95.05"
  std::string installed_package;       // nvidia-open or cuda-drivers (kNvidiaRepo)
  std::vector<std::string> packages;   // every installed driver package of that source (for a purge)
  // X of an installed nvidia-driver-pinning-X ("580", "590.44.01"), or the
  // branch gpuctl's preferences file holds (before 580).
  std::string pinned;
  std::vector<std::string> cuda_processes;  // "pid name" of processes on the GPUs now (nvidia-smi)
  // Debian only: the sources' contrib status (debian_sources.h).
  bool contrib_enabled = true;
  std::string contrib_list;
  // Proxmox host only: the files that load nvidia_uvm at boot are current.
  bool uvm_at_boot = true;
  // LXC guest: which of the user-space packages are installed, at which version.
  std::map<std::string, std::string> guest_installed;  // name -> upstream version
  bool guest_pin_present = false;  // the pinning package, or gpuctl's preferences file
};

struct DriverRequest {
  int branch = 0;              // 0: kDefaultDriverBranch
  bool branch_given = false;   // --driver-branch was given: a working driver of another branch is not kept
  bool replace_driver = false;
  bool secure_boot_enrolled = false;
};

// From the normalized options (--driver-branch, --replace-driver, --secure-boot-enrolled).
DriverRequest DriverRequestOf(const ProvisionOptions& options);

struct DriverPlan {
  bool done = false;
  std::string detail;
  std::vector<StepAction> actions;  // after NVIDIA's repository keyring, which the step adds
  std::vector<std::string> notes;
  bool reboot_required = false;
};

// Files gpuctl writes.
inline constexpr std::string_view kContribListPath = "/etc/apt/sources.list.d/gpuctl-contrib.list";
inline constexpr std::string_view kUvmModulesLoadPath = "/etc/modules-load.d/gpuctl-nvidia-uvm.conf";
inline constexpr std::string_view kUvmUdevRulePath = "/etc/udev/rules.d/70-gpuctl-nvidia-uvm.rules";
inline constexpr std::string_view kPinPreferencesPath = "/etc/apt/preferences.d/gpuctl-nvidia-driver";
std::string UvmModulesLoadContent();
std::string UvmUdevRuleContent();
// apt preferences that pin every NVIDIA driver package to `version` ("550.127.05"
// in a guest, "570.*" for a host's branch), for branches without a pinning
// package (before 580). Written to kPinPreferencesPath.
std::string DriverPinPreferences(const std::string& version);

// A host (not a guest). Errors: kFailedPrecondition, a refusal naming the
// ways out (exit 2): GPUs no flavour drives together, a pre-Turing GPU with a
// branch after 580, a working driver in use without --replace-driver, Secure
// Boot without --secure-boot-enrolled.
Result<DriverPlan> PlanHostDriver(const PlanFacts& facts, const DriverState& state, const DriverRequest& request);

// Which plan the driver step makes: the guest's in a container of any kind
// (facts.container_guest, from sys::WhereRunning), the host's on a VM or bare metal.
bool PlansAsGuest(const PlanFacts& facts);

// A container guest (LXC, Docker, Podman...): user space only, at the host module's exact version, pinned
// as NVIDIA pins it. Never a DKMS or kernel package. Errors: no host module,
// user space of another version already installed.
Result<DriverPlan> PlanGuestDriver(const PlanFacts& facts, const DriverState& state);
// The user-space packages a guest gets for the host module `version`.
std::vector<std::string> GuestDriverPackages(const PlanFacts& facts, const std::string& version);
// The pinning package for a guest, or empty when the branch has none.
std::string GuestPinningPackage(const std::string& version);

// The driver CUDA will run on once the plan ran: the host's module in a guest
// or when the driver step is not planned or keeps the working driver; else the
// branch the driver step installs ("580"). nullopt: none known.
std::optional<std::string> DriverForCuda(const PlanFacts& facts, const DriverRequest& request, bool driver_planned);

}  // namespace gpuctl::provision
