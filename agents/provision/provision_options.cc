#include "agents/provision/provision_options.h"

#include <algorithm>

#include "agents/provision/cuda_releases.h"
#include "agents/provision/torch_index.h"

namespace gpuctl::provision {
namespace {

bool IsDigits(std::string_view s) {
  return !s.empty() && std::all_of(s.begin(), s.end(), [](char c) { return c >= '0' && c <= '9'; });
}

// "2.10.0", "2.10", "2.10.0rc1": digits and dots, then an optional suffix of
// letters and digits. Anything else could smuggle pip options into argv.
bool IsPackageVersion(std::string_view s) {
  if (s.empty() || s.size() > 32 || !(s[0] >= '0' && s[0] <= '9')) return false;
  return std::all_of(s.begin(), s.end(), [](char c) {
    return (c >= '0' && c <= '9') || c == '.' || (c >= 'a' && c <= 'z');
  });
}

bool IsPackageName(std::string_view s) {
  if (s.empty() || s.size() > 64 || s[0] == '-' || s[0] == '.') return false;
  return std::all_of(s.begin(), s.end(), [](char c) {
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '-' ||
           c == '_' || c == '.';
  });
}

bool IsSafeAbsolutePath(std::string_view s) {
  if (s.size() < 2 || s[0] != '/' || s.find("/../") != std::string_view::npos || s.ends_with("/..")) return false;
  return std::all_of(s.begin(), s.end(), [](char c) {
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '-' ||
           c == '_' || c == '.' || c == '/';
  });
}

// An http(s) URL without spaces, quotes or shell characters: it goes into argv.
bool IsIndexUrl(std::string_view s) {
  if (s.size() > 512 || !(s.starts_with("https://") || s.starts_with("http://"))) return false;
  return std::all_of(s.begin(), s.end(), [](char c) {
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
           std::string_view("-._~:/?#[]@!&+,;=%").find(c) != std::string_view::npos;
  });
}

// A venv is made by root: never in or over what the system owns. Beneath
// these, nothing of a venv belongs; these alone are where one would write
// bin/, lib/ and include/ over the system's (or over users' homes).
constexpr std::string_view kSystemTrees[] = {"/bin",        "/boot",       "/dev",     "/etc",      "/lib",
                                             "/lib32",      "/lib64",      "/libx32",  "/proc",     "/run",
                                             "/sbin",       "/sys",        "/usr/bin", "/usr/include", "/usr/lib",
                                             "/usr/lib32",  "/usr/lib64",  "/usr/libexec", "/usr/sbin", "/usr/share",
                                             "/var/lib/dpkg", "/var/lib/apt", "/var/cache/apt", "/var/log"};
constexpr std::string_view kSystemDirs[] = {"/",       "/home", "/media", "/mnt",      "/opt",     "/root",
                                            "/srv",    "/tmp",  "/usr",   "/usr/local", "/var",    "/var/lib",
                                            "/var/cache", "/var/tmp", "/var/spool", "/var/opt", "/usr/local/bin",
                                            "/usr/local/lib", "/usr/local/sbin", "/usr/local/share", "/usr/local/include"};

// The system directory `path` is or lies beneath; empty: none.
std::string_view SystemDirectoryOf(std::string_view path) {
  for (std::string_view tree : kSystemTrees) {
    if (path == tree || (path.starts_with(tree) && path[tree.size()] == '/')) return tree;
  }
  for (std::string_view dir : kSystemDirs) {
    if (path == dir) return dir;
  }
  return {};
}

}  // namespace

bool IsPlainHttp(std::string_view url) { return url.starts_with("http://"); }

const std::vector<std::string>& StepOrder() {
  static const std::vector<std::string> order = {std::string(kStepDriver), std::string(kStepCuda),
                                                 std::string(kStepVenv), std::string(kStepTorch),
                                                 std::string(kStepExt)};
  return order;
}

Result<ProvisionOptions> NormalizeOptions(ProvisionOptions options, const ProvisionConfig& config) {
  if (options.cuda_version.empty()) options.cuda_version = config.default_cuda;
  if (options.torch_version.empty()) options.torch_version = config.default_torch;
  if (options.venv_path.empty()) options.venv_path = config.default_venv;
  while (options.venv_path.size() > 1 && options.venv_path.back() == '/') options.venv_path.pop_back();

  auto cuda = ParseCudaVersion(options.cuda_version);
  if (!cuda || std::count(options.cuda_version.begin(), options.cuda_version.end(), '.') != 1) {
    return InvalidArgument("--cuda '" + options.cuda_version + "' is not a CUDA version: give MAJOR.MINOR, e.g. 13.1");
  }
  // Past the releases known here, a real run would install the driver and
  // only then find, in apt, that no such toolkit exists: refused up front.
  const CudaVersion newest = NewestKnownCuda();
  const bool past_table = cuda->major > newest.major || (cuda->major == newest.major && cuda->minor > newest.minor);
  if (past_table && !options.cuda_unlisted) {
    return InvalidArgument("--cuda " + options.cuda_version + " is newer than the CUDA releases gpuctl knows (up to " +
                           FormatCudaVersion(newest) +
                           "): a run would install the driver before apt could say whether it exists. Give a "
                           "listed version, or add --cuda-unlisted to try it anyway");
  }
  if (!IsPackageVersion(options.torch_version)) {
    return InvalidArgument("--torch '" + options.torch_version + "' is not a PyTorch version: give e.g. 2.10.0");
  }
  if (!IsSafeAbsolutePath(options.venv_path)) {
    return InvalidArgument("--venv '" + options.venv_path +
                           "' must be an absolute path of letters, digits and . _ - / (no ..)");
  }
  if (std::string_view system = SystemDirectoryOf(options.venv_path); !system.empty()) {
    const std::string where = system == options.venv_path ? "is" : "is beneath " + std::string(system) + ",";
    return InvalidArgument("--venv " + options.venv_path + " " + where +
                           " a system directory: the venv is made as root and would write its bin/, lib/ and "
                           "include/ there. Give a directory of its own, e.g. /opt/gpuctl/venv");
  }
  if (!options.ext.empty() && !IsPackageName(options.ext)) {
    return InvalidArgument("--ext '" + options.ext + "' is not a package name: give e.g. flash-attn");
  }
  if (!options.ext_source.empty()) {
    if (options.ext.empty()) return InvalidArgument("--ext-source needs --ext NAME, the package it builds");
    if (!IsSafeAbsolutePath(options.ext_source)) {
      return InvalidArgument("--ext-source '" + options.ext_source +
                             "' must be an absolute path of letters, digits and . _ - / (no ..)");
    }
  }
  if (!options.container.empty() && (!IsDigits(options.container) || options.container.size() > 9)) {
    return InvalidArgument("--container '" + options.container + "' is not a Proxmox VMID (a number, e.g. 200)");
  }

  if (!options.driver_branch.empty() &&
      (!IsDigits(options.driver_branch) || options.driver_branch.size() != 3 || options.driver_branch[0] < '4')) {
    return InvalidArgument("--driver-branch '" + options.driver_branch +
                           "' is not a driver branch: give its number, e.g. 580 (long-term) or 595");
  }
  if (!options.torch_index.empty() && !IsIndexUrl(options.torch_index)) {
    return InvalidArgument("--torch-index '" + options.torch_index +
                           "' is not a wheel index URL: give http(s)://HOST/PATH, e.g. a mirror's .../whl/cu130");
  }
  // torch and its CUDA libraries are installed as root: over plain HTTP,
  // anyone on the path could replace them.
  if (IsPlainHttp(options.torch_index) && !options.allow_insecure_index) {
    return InvalidArgument("--torch-index '" + options.torch_index +
                           "' is plain HTTP, and torch is installed from it as root: anyone on the network path "
                           "could change what is installed. Give an https:// index, or add --allow-insecure-index "
                           "to accept that (the plan then says so)");
  }

  std::vector<std::string> wanted = options.steps;
  if (wanted.empty()) {
    wanted = {std::string(kStepDriver), std::string(kStepCuda), std::string(kStepVenv), std::string(kStepTorch)};
    if (!options.ext.empty()) wanted.emplace_back(kStepExt);
  }
  for (const std::string& step : wanted) {
    if (std::find(StepOrder().begin(), StepOrder().end(), step) == StepOrder().end()) {
      return InvalidArgument("unknown step '" + step + "': the steps are driver, cuda, venv, torch, ext");
    }
  }
  bool wants_ext = std::find(wanted.begin(), wanted.end(), kStepExt) != wanted.end();
  if (wants_ext && options.ext.empty()) {
    return InvalidArgument("the ext step needs --ext NAME (e.g. --ext flash-attn)");
  }
  options.steps.clear();
  for (const std::string& step : StepOrder()) {
    if (std::find(wanted.begin(), wanted.end(), step) != wanted.end()) options.steps.push_back(step);
  }
  return options;
}

}  // namespace gpuctl::provision
