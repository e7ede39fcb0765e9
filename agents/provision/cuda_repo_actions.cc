#include "agents/provision/cuda_repo_actions.h"

#include "agents/provision/cuda_repo.h"
#include "agents/sys/files.h"

namespace gpuctl::provision {

Result<std::vector<StepAction>> CudaRepoActions(const StepContext& context,
                                                const std::map<std::string, InstalledPackage>& installed) {
  auto keyring = installed.find(std::string(kCudaKeyringPackage));
  if (keyring != installed.end() && keyring->second.installed) return std::vector<StepAction>{};
  auto repo = CudaRepoPath(context.facts.os_id, context.facts.os_version_id, context.facts.machine);
  if (!repo) {
    return Refusal("NVIDIA publishes no CUDA apt repository for '" + context.facts.os_id + " " +
                   context.facts.os_version_id + "' (" + context.facts.machine +
                   "): use Ubuntu 22.04/24.04 or Debian 12/13, or add the repository by hand and rerun");
  }
  std::vector<StepAction> actions;
  // A minimal host (debootstrap, a container image) may lack curl or the CA
  // bundle that https needs: from the distribution's own archive first.
  if (!sys::PathExists(context.target.HostPath("/usr/bin/curl")) ||
      !sys::PathExists(context.target.HostPath("/etc/ssl/certs/ca-certificates.crt"))) {
    actions.push_back(AptUpdate());
    actions.push_back(AptInstall({"curl", "ca-certificates"}));
  }
  std::string deb = context.download_dir + "/" + std::string(kCudaKeyringDeb);
  StepAction download;
  download.argv = {"curl", "-fsSL", "--retry", "3", "-o", deb, CudaKeyringUrl(*repo)};
  StepAction install;
  install.argv = {"dpkg", "-i", deb};
  actions.push_back(download);
  actions.push_back(install);
  return actions;
}

StepAction AptUpdate() {
  StepAction update;
  update.argv = {"apt-get", "update"};
  update.env = AptEnv();
  return update;
}

StepAction AptInstall(std::vector<std::string> packages, bool no_recommends) {
  StepAction install;
  install.argv = {"apt-get", "install", "-y"};
  if (no_recommends) install.argv.emplace_back("--no-install-recommends");
  install.argv.insert(install.argv.end(), packages.begin(), packages.end());
  install.env = AptEnv();
  return install;
}

}  // namespace gpuctl::provision
