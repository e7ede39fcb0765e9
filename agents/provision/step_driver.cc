// driver: on a host, NVIDIA's CUDA repository and the driver of one branch,
// pinned with NVIDIA's pinning package; in an LXC guest the host's module
// is the driver and only user space is installed, at exactly its version
// (any other gives "Driver/library version mismatch"). This file gathers the
// facts (packages, sources, files, CUDA processes); driver_plan.h decides.
#include <algorithm>

#include "agents/provision/apt_packages.h"
#include "agents/provision/cuda_repo_actions.h"
#include "agents/provision/debian_sources.h"
#include "agents/provision/driver_branches.h"
#include "agents/provision/driver_plan.h"
#include "agents/provision/steps.h"
#include "agents/sys/directory_listing.h"
#include "agents/sys/files.h"
#include "agents/sys/text_fields.h"

namespace gpuctl::provision {
namespace {

constexpr std::string_view kPinningPrefix = "nvidia-driver-pinning-";
// NVIDIA's repository's driver, open and proprietary flavours.
const std::vector<std::string> kNvidiaRepoDrivers = {"nvidia-open", "cuda-drivers"};
// A driver from the distribution: Ubuntu's branch packages, Debian's own.
const std::vector<std::string> kDistroDriverGlobs = {
    "nvidia-driver-[0-9]*", "nvidia-headless-[0-9]*", "nvidia-dkms-[0-9]*", "libnvidia-compute-[0-9]*",
    "nvidia-utils-[0-9]*",  "nvidia-driver",          "nvidia-kernel-dkms", "nvidia-kernel-open-dkms"};

bool Matches(const std::string& name, const std::string& glob) {
  if (glob.ends_with("[0-9]*")) {
    std::string prefix = glob.substr(0, glob.size() - 6);
    return name.size() > prefix.size() && name.rfind(prefix, 0) == 0 && std::isdigit(name[prefix.size()]);
  }
  return name == glob;
}

class DriverStep final : public Step {
 public:
  explicit DriverStep(const StepContext& context) : context_(context) {}
  std::string Name() const override { return std::string(kStepDriver); }

  Result<StepCheck> Check() override {
    state_ = DriverState{};
    Result<DriverPlan> plan = Guest() ? CheckGuest() : CheckHost();
    if (!plan.ok()) return plan.status();
    plan_ = *plan;
    StepCheck check;
    check.done = plan_.done;
    check.detail = plan_.detail;
    check.reboot_required = plan_.reboot_required;
    if (plan_.done) check.notes = plan_.notes;
    return check;
  }

  Result<StepPlan> Plan(const StepCheck&) override {
    StepPlan plan;
    const bool uses_repo = std::any_of(plan_.actions.begin(), plan_.actions.end(), [](const StepAction& a) {
      return a.argv.size() > 1 && a.argv[0] == "apt-get" && a.argv[1] == "install";
    });
    if (uses_repo) {
      auto repo = CudaRepoActions(context_, installed_);
      if (!repo.ok()) return repo.status();
      plan.actions = *repo;
    }
    plan.actions.insert(plan.actions.end(), plan_.actions.begin(), plan_.actions.end());
    plan.notes = plan_.notes;
    return plan;
  }

 private:
  bool Guest() const { return PlansAsGuest(context_.facts) || context_.target.in_container(); }

  Status Query(std::vector<std::string> names) {
    names.emplace_back(kCudaKeyringPackage);
    names.push_back(std::string(kPinningPrefix) + "*");
    auto installed = QueryPackages(context_.target, names, context_.config.check_timeout);
    if (!installed.ok()) return installed.status();
    installed_.clear();
    for (const auto& [name, package] : *installed) {
      if (package.installed) installed_[name] = package;
    }
    for (const auto& [name, package] : installed_) {
      if (name.rfind(kPinningPrefix, 0) == 0) state_.pinned = name.substr(kPinningPrefix.size());
    }
    return Status::Ok();
  }

  // The target's apt sources. A container's root user controls its files:
  // read as regular files only (no FIFO, no final link), resolved inside
  // its root, and bounded.
  void ReadContrib() {
    if (context_.facts.os_id != "debian") return;
    constexpr size_t kMaxSourcesBytes = 1 << 20;
    std::vector<AptSourceFile> files;
    auto add = [&](const std::string& path, std::string name) {
      if (auto text = sys::ReadRegularFile(context_.target.HostPath(path), kMaxSourcesBytes); text.ok()) {
        files.push_back({std::move(name), *text});
      }
    };
    add("/etc/apt/sources.list", "sources.list");
    const std::string dir = "/etc/apt/sources.list.d";
    for (const std::string& name : sys::ListDirectoryNames(context_.target.HostPath(dir))) add(dir + "/" + name, name);
    ContribStatus contrib = DebianContribStatus(files);
    state_.contrib_enabled = contrib.enabled;
    state_.contrib_list = contrib.contrib_list;
  }

  bool FileIs(std::string_view path, const std::string& content) const {
    auto text = sys::ReadWholeFile(context_.target.HostPath(std::string(path)));
    return text.ok() && *text == content;
  }

  void ReadCudaProcesses() {
    if (!context_.facts.kernel_module_version) return;
    auto apps = context_.target.RunCheck({"nvidia-smi", "--query-compute-apps=pid,process_name", "--format=csv,noheader"},
                                         context_.config.check_timeout);
    if (!apps.ok() || apps->exit_code != 0) return;
    for (std::string_view line : sys::Lines(apps->stdout_text)) {
      line = sys::Trim(line);
      if (!line.empty() && line.find("No running") == std::string_view::npos) state_.cuda_processes.emplace_back(line);
    }
  }

  Result<DriverPlan> CheckHost() {
    std::vector<std::string> names = kNvidiaRepoDrivers;
    names.insert(names.end(), kDistroDriverGlobs.begin(), kDistroDriverGlobs.end());
    if (Status s = Query(names); !s.ok()) return s;
    for (const std::string& driver : kNvidiaRepoDrivers) {
      auto it = installed_.find(driver);
      if (it == installed_.end()) continue;
      state_.source = DriverSource::kNvidiaRepo;
      state_.installed_package = driver;
      state_.installed_version = UpstreamVersion(it->second.version);
      break;
    }
    if (state_.source == DriverSource::kNvidiaRepo) {
      if (!state_.pinned.empty()) state_.packages = {std::string(kPinningPrefix) + state_.pinned};
    } else {
      for (const auto& [name, package] : installed_) {
        bool distro = std::any_of(kDistroDriverGlobs.begin(), kDistroDriverGlobs.end(),
                                  [&](const std::string& glob) { return Matches(name, glob); });
        if (!distro) continue;
        state_.source = DriverSource::kDistro;
        state_.packages.push_back(name);
        if (state_.installed_version.empty()) state_.installed_version = UpstreamVersion(package.version);
      }
    }
    if (state_.source == DriverSource::kNone && sys::PathExists(context_.target.HostPath("/usr/bin/nvidia-uninstall"))) {
      state_.source = DriverSource::kRunfile;
      state_.installed_version = context_.facts.driver_library_version;
    }
    // Before 580 the pin is gpuctl's preferences file, not a package.
    const DriverRequest request = DriverRequestOf(context_.options);
    const int branch = request.branch > 0 ? request.branch : kDefaultDriverBranch;
    if (state_.pinned.empty() && FileIs(kPinPreferencesPath, DriverPinPreferences(std::to_string(branch) + ".*"))) {
      state_.pinned = std::to_string(branch);
    }
    ReadContrib();
    state_.uvm_at_boot = FileIs(kUvmModulesLoadPath, UvmModulesLoadContent()) &&
                         FileIs(kUvmUdevRulePath, UvmUdevRuleContent());
    ReadCudaProcesses();
    return PlanHostDriver(context_.facts, state_, request);
  }

  Result<DriverPlan> CheckGuest() {
    const auto& module = context_.facts.kernel_module_version;
    if (!module) return PlanGuestDriver(context_.facts, state_);  // the refusal
    std::vector<std::string> user_space = GuestDriverPackages(context_.facts, *module);
    std::vector<std::string> names = user_space;
    // Another branch's user space (libnvidia-compute-580 under a 590 module)
    // must be seen too: it is the mismatch, not a missing package.
    names.emplace_back("libnvidia-compute-[0-9]*");
    if (Status s = Query(names); !s.ok()) return s;
    for (const auto& [name, package] : installed_) {
      bool ours = std::find(user_space.begin(), user_space.end(), name) != user_space.end() ||
                  Matches(name, "libnvidia-compute-[0-9]*");
      if (ours) state_.guest_installed[name] = UpstreamVersion(package.version);
    }
    const std::string pinning = GuestPinningPackage(*module);
    state_.guest_pin_present = pinning.empty() ? FileIs(kPinPreferencesPath, DriverPinPreferences(*module))
                                               : installed_.contains(pinning);
    ReadContrib();
    return PlanGuestDriver(context_.facts, state_);
  }

  const StepContext& context_;
  std::map<std::string, InstalledPackage> installed_;
  DriverState state_;
  DriverPlan plan_;
};

}  // namespace

std::unique_ptr<Step> MakeDriverStep(const StepContext& context) { return std::make_unique<DriverStep>(context); }

}  // namespace gpuctl::provision
