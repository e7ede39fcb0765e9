// cuda: cuda-toolkit-X-Y from NVIDIA's repository and a profile.d file that
// puts it on PATH and LD_LIBRARY_PATH for login shells.
#include <algorithm>

#include "agents/provision/apt_packages.h"
#include "agents/provision/cuda_releases.h"
#include "agents/provision/cuda_repo.h"
#include "agents/provision/cuda_repo_actions.h"
#include "agents/provision/cuda_toolkit.h"
#include "agents/provision/driver_plan.h"
#include "agents/provision/steps.h"
#include "agents/sys/files.h"

namespace gpuctl::provision {
namespace {

class CudaStep final : public Step {
 public:
  CudaStep(const StepContext& context, CudaVersion version) : context_(context), version_(version) {}
  std::string Name() const override { return std::string(kStepCuda); }

  Result<StepCheck> Check() override {
    const std::string package = CudaToolkitPackage(version_);
    auto installed = QueryPackages(context_.target, {package, std::string(kCudaKeyringPackage)},
                                   context_.config.check_timeout);
    if (!installed.ok()) return installed.status();
    installed_ = *installed;
    StepCheck check;
    auto it = installed_.find(package);
    package_installed_ = it != installed_.end() && it->second.installed;
    // NVIDIA's runfile leaves the directory and no package: as good as installed.
    const auto& found = context_.facts.cuda_toolkit_versions;
    bool from_runfile = !package_installed_ &&
                        std::find(found.begin(), found.end(), FormatCudaVersion(version_)) != found.end();
    std::string what = from_runfile ? "CUDA " + FormatCudaVersion(version_) + " (installed without a package)"
                                    : package + (package_installed_ ? " " + it->second.version : "");
    package_installed_ = package_installed_ || from_runfile;
    if (!package_installed_) {
      // Only a toolkit that can exist, for a driver that can run it.
      if (auto repo = CudaRepoPath(context_.facts.os_id, context_.facts.os_version_id, context_.facts.machine)) {
        if (Status s = CheckCudaToolkitExists(repo->substr(0, repo->find('/')), version_); !s.ok()) return s;
      }
      // A guest runs on the host's driver; a host on the driver its driver
      // step keeps or installs.
      std::optional<std::string> driver =
          DriverForCuda(context_.facts, DriverRequestOf(context_.options), context_.Planned(kStepDriver));
      if (Status s = CheckCudaAgainstDriver(version_, driver); !s.ok()) return s;
      if (Status s = CheckCudaAgainstGpus(version_, context_.facts.compute_capabilities); !s.ok()) return s;
    }
    auto profile = sys::ReadWholeFile(context_.target.HostPath(std::string(kCudaProfilePath)));
    profile_current_ = profile.ok() && *profile == CudaProfileScript(version_);
    if (!package_installed_) {
      check.detail = package + " is not installed";
    } else if (!profile_current_) {
      check.detail = what + " is installed but " + std::string(kCudaProfilePath) + " does not point at " +
                     CudaHome(version_);
    } else {
      check.done = true;
      check.detail = what + " installed, " + CudaHome(version_) + " on PATH";
    }
    return check;
  }

  Result<StepPlan> Plan(const StepCheck&) override {
    StepPlan plan;
    if (!package_installed_) {
      auto repo = CudaRepoActions(context_, installed_);
      if (!repo.ok()) return repo.status();
      plan.actions = *repo;
      plan.actions.push_back(AptUpdate());
      plan.actions.push_back(AptInstall({CudaToolkitPackage(version_)}));
    }
    StepAction profile;
    profile.write_path = std::string(kCudaProfilePath);
    profile.content = CudaProfileScript(version_);
    plan.actions.push_back(profile);
    return plan;
  }

 private:
  const StepContext& context_;
  CudaVersion version_;
  std::map<std::string, InstalledPackage> installed_;
  bool package_installed_ = false;
  bool profile_current_ = false;
};

}  // namespace

std::unique_ptr<Step> MakeCudaStep(const StepContext& context) {
  // Options are normalized: the version parses.
  return std::make_unique<CudaStep>(context, ParseCudaVersion(context.options.cuda_version).value_or(CudaVersion{}));
}

}  // namespace gpuctl::provision
