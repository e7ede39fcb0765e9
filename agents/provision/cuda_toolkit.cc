#include "agents/provision/cuda_toolkit.h"

#include "agents/provision/apt_packages.h"

namespace gpuctl::provision {

std::string CudaToolkitPackage(CudaVersion v) {
  return "cuda-toolkit-" + std::to_string(v.major) + "-" + std::to_string(v.minor);
}

std::string CudaHome(CudaVersion v) { return "/usr/local/cuda-" + FormatCudaVersion(v); }

std::string CudaProfileScript(CudaVersion v) {
  std::string home = CudaHome(v);
  return "# Written by gpuctl provision (cuda step): CUDA " + FormatCudaVersion(v) +
         " for login shells. Rerunning the step rewrites it.\n"
         "export CUDA_HOME=" + home + "\n"
         "export PATH=" + home + "/bin${PATH:+:${PATH}}\n"
         "export LD_LIBRARY_PATH=" + home + "/lib64${LD_LIBRARY_PATH:+:${LD_LIBRARY_PATH}}\n";
}

Result<std::optional<CudaVersion>> ToolkitForBuilds(const StepContext& context) {
  if (context.Planned(kStepCuda)) return std::optional<CudaVersion>(ParseCudaVersion(context.options.cuda_version));
  auto installed = QueryPackages(context.target, {"cuda-toolkit-[0-9]*"}, context.config.check_timeout);
  if (!installed.ok()) return installed.status();
  std::optional<CudaVersion> newest;
  auto consider = [&newest](std::optional<CudaVersion> v) {
    if (v && (!newest || v->major > newest->major || (v->major == newest->major && v->minor > newest->minor))) {
      newest = v;
    }
  };
  for (const auto& [name, package] : *installed) {
    if (!package.installed) continue;
    // cuda-toolkit-13-1 -> 13.1
    std::string suffix = name.substr(std::string("cuda-toolkit-").size());
    size_t dash = suffix.find('-');
    if (dash == std::string::npos) continue;
    consider(ParseCudaVersion(suffix.substr(0, dash) + "." + suffix.substr(dash + 1)));
  }
  // A toolkit from NVIDIA's runfile has no package, only its directory.
  for (const std::string& version : context.facts.cuda_toolkit_versions) consider(ParseCudaVersion(version));
  return newest;
}

}  // namespace gpuctl::provision
