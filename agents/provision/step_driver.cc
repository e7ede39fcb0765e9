// driver: on a host, NVIDIA's CUDA repository and nvidia-open (the open
// kernel modules, the only ones Blackwell supports), held so an unattended
// upgrade cannot replace the module under running jobs. In an LXC guest the
// kernel module is the host's: only user space is installed, at exactly the
// module's version (any other gives "Driver/library version mismatch").
#include <algorithm>
#include <optional>

#include "agents/provision/apt_packages.h"
#include "agents/provision/cuda_repo_actions.h"
#include "agents/provision/steps.h"

namespace gpuctl::provision {
namespace {

// nvidia-open pins its dependencies (kernel module, libraries) to its own
// version with "=", so holding it holds the driver as a whole.
constexpr std::string_view kHostDriverPackage = "nvidia-open";
// Ubuntu's user-space compute library, one package per driver branch.
constexpr std::string_view kComputeLibraryPrefix = "libnvidia-compute-";

std::string Join(const std::vector<std::string>& items, std::string_view sep) {
  std::string out;
  for (const auto& item : items) out += (out.empty() ? "" : std::string(sep)) + item;
  return out;
}

class DriverStep final : public Step {
 public:
  explicit DriverStep(const StepContext& context) : context_(context) {}
  std::string Name() const override { return std::string(kStepDriver); }

  Result<StepCheck> Check() override {
    if (Guest()) return CheckGuest();
    return CheckHost();
  }

  Result<StepPlan> Plan(const StepCheck&) override {
    StepPlan plan;
    auto repo = CudaRepoActions(context_, installed_);
    if (!repo.ok()) return repo.status();
    plan.actions = *repo;
    std::vector<std::string> packages = Packages();
    bool all_installed = std::all_of(packages.begin(), packages.end(), [&](const std::string& p) {
      auto it = installed_.find(p);
      return it != installed_.end() && it->second.installed;
    });
    if (!all_installed) {
      plan.actions.push_back(AptUpdate());
      if (std::optional<std::string> headers = MissingHeaders()) {
        // Before the driver: its DKMS module build needs them, and without
        // them it "installs" with no module to load.
        plan.actions.push_back(AptInstall({*headers}));
        plan.notes.push_back("the driver's module is built for the running kernel " + context_.facts.kernel_release +
                             ": " + *headers + " first");
      }
      std::vector<std::string> install = packages;
      if (Guest()) {
        // apt matches the version as a glob: 590.44.01-1 (Debian) or 590.44.01-0ubuntu1.
        for (auto& p : install) p += "=" + *context_.facts.kernel_module_version + "-*";
      }
      plan.actions.push_back(AptInstall(install, Guest()));
    }
    StepAction hold;
    hold.argv = {"apt-mark", "hold"};
    hold.argv.insert(hold.argv.end(), packages.begin(), packages.end());
    plan.actions.push_back(hold);
    if (Guest()) {
      plan.notes.push_back("container: user space only, pinned to the host's kernel module " +
                           *context_.facts.kernel_module_version + "; no kernel module is installed");
    }
    return plan;
  }

 private:
  bool Guest() const { return context_.facts.lxc_guest || context_.target.in_container(); }

  // The running kernel's headers package when they are missing on a host:
  // proxmox-headers-RELEASE on Proxmox VE, linux-headers-RELEASE elsewhere.
  std::optional<std::string> MissingHeaders() const {
    const std::string& release = context_.facts.kernel_release;
    if (Guest() || context_.facts.kernel_headers_installed || release.empty()) return std::nullopt;
    if (release.find_first_not_of("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789.+-") !=
        std::string::npos) {
      return std::nullopt;  // not a package-name part: left for DKMS to report
    }
    return (context_.facts.proxmox_host ? "proxmox-headers-" : "linux-headers-") + release;
  }

  // User space that matches the host's module, by the repository's naming.
  std::vector<std::string> Packages() const {
    if (!Guest()) return {std::string(kHostDriverPackage)};
    const std::string& version = *context_.facts.kernel_module_version;
    std::string branch = version.substr(0, version.find('.'));
    if (context_.facts.os_id == "ubuntu") return {"libnvidia-compute-" + branch, "nvidia-utils-" + branch};
    return {"nvidia-driver-cuda"};
  }

  Status Query() {
    std::vector<std::string> names = Packages();
    names.emplace_back(kCudaKeyringPackage);
    // Another branch's user space (libnvidia-compute-580 under a 590 module)
    // must be seen too: it is the mismatch, not a missing package.
    if (Guest()) names.emplace_back(std::string(kComputeLibraryPrefix) + "[0-9]*");
    auto installed = QueryPackages(context_.target, names, context_.config.check_timeout);
    if (!installed.ok()) return installed.status();
    installed_ = *installed;
    auto held = QueryHeld(context_.target, context_.config.check_timeout);
    if (!held.ok()) return held.status();
    held_ = *held;
    return Status::Ok();
  }

  Result<StepCheck> CheckHost() {
    if (Status s = Query(); !s.ok()) return s;
    StepCheck check;
    const std::string name(kHostDriverPackage);
    auto it = installed_.find(name);
    if (it == installed_.end() || !it->second.installed) {
      check.detail = name + " is not installed";
      return check;
    }
    std::string installed_version = UpstreamVersion(it->second.version);
    const auto& module = context_.facts.kernel_module_version;
    if (!module) {
      check.reboot_required = true;
      check.notes.push_back("reboot needed: " + name + " " + installed_version +
                            " is installed but no NVIDIA kernel module is loaded");
    } else if (*module != installed_version) {
      check.reboot_required = true;
      check.notes.push_back("reboot needed: the loaded kernel module is " + *module + ", the installed driver " +
                            installed_version);
    }
    if (!held_.contains(name)) {
      check.detail = name + " " + it->second.version + " is installed but not held";
      return check;
    }
    check.done = true;
    check.detail = name + " " + it->second.version + " installed and held";
    return check;
  }

  Result<StepCheck> CheckGuest() {
    const auto& module = context_.facts.kernel_module_version;
    if (!module) {
      return Refusal(
          "no NVIDIA kernel module is loaded on the host (/proc/driver/nvidia/version is missing); a container "
          "uses the host's module: install the driver on the Proxmox host first (gpuctl provision node "
          "--steps driver on the host), then rerun");
    }
    if (Status s = Query(); !s.ok()) return s;
    StepCheck check;
    std::vector<std::string> missing;
    std::vector<std::string> not_held;
    std::vector<std::string> user_space = Packages();
    for (const auto& [name, package] : installed_) {
      if (name.rfind(kComputeLibraryPrefix, 0) == 0 && package.installed &&
          std::find(user_space.begin(), user_space.end(), name) == user_space.end()) {
        user_space.push_back(name);
      }
    }
    for (const std::string& p : user_space) {
      auto it = installed_.find(p);
      if (it == installed_.end() || !it->second.installed) {
        missing.push_back(p);
        continue;
      }
      std::string version = UpstreamVersion(it->second.version);
      if (version != *module) {
        return Refusal("the container has NVIDIA user space " + version + " (" + p +
                       ") but the host's kernel module is " + *module +
                       ": CUDA would fail with \"Driver/library version mismatch\". Either remove it (apt-get "
                       "purge " + p + ") and rerun to install " + *module + ", or change the host's driver to " +
                       version);
      }
      if (!held_.contains(p)) not_held.push_back(p);
    }
    if (!missing.empty()) {
      check.detail = "user space " + *module + " not installed (" + Join(missing, ", ") + ")";
    } else if (!not_held.empty()) {
      check.detail = "user space " + *module + " installed but not held (" + Join(not_held, ", ") + ")";
    } else {
      check.done = true;
      check.detail = "user space " + *module + " installed and held, matching the host's kernel module";
    }
    return check;
  }

  const StepContext& context_;
  std::map<std::string, InstalledPackage> installed_;
  std::set<std::string> held_;
};

}  // namespace

std::unique_ptr<Step> MakeDriverStep(const StepContext& context) { return std::make_unique<DriverStep>(context); }

}  // namespace gpuctl::provision
