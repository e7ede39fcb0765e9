#include "agents/provision/apt_packages.h"

#include <sstream>

namespace gpuctl::provision {

std::map<std::string, InstalledPackage> ParseDpkgQuery(std::string_view text) {
  std::map<std::string, InstalledPackage> packages;
  std::istringstream lines{std::string(text)};
  std::string line;
  while (std::getline(lines, line)) {
    std::istringstream words(line);
    std::string name, want, error, status, version;
    if (!(words >> name >> want >> error >> status)) continue;
    words >> version;
    packages[name] = InstalledPackage{version, status == "installed"};
  }
  return packages;
}

std::set<std::string> ParseShowHold(std::string_view text) {
  std::set<std::string> held;
  std::istringstream lines{std::string(text)};
  std::string name;
  while (lines >> name) held.insert(name);
  return held;
}

std::string UpstreamVersion(std::string_view debian_version) {
  size_t colon = debian_version.find(':');
  if (colon != std::string_view::npos) debian_version.remove_prefix(colon + 1);
  size_t dash = debian_version.rfind('-');
  return std::string(dash == std::string_view::npos ? debian_version : debian_version.substr(0, dash));
}

Result<std::map<std::string, InstalledPackage>> QueryPackages(const StepTarget& target,
                                                              const std::vector<std::string>& names,
                                                              std::chrono::milliseconds timeout) {
  std::vector<std::string> argv = {"dpkg-query", "-W", "-f=${Package} ${Status} ${Version}\\n"};
  argv.insert(argv.end(), names.begin(), names.end());
  auto out = target.RunCheck(argv, timeout);
  if (!out.ok()) return out.status();
  // Exit 1 only says some names matched nothing; the rest are listed.
  if (out->exit_code != 0 && out->exit_code != 1) {
    return Unavailable("dpkg-query exited " + std::to_string(out->exit_code) + ": " + OutputTail(*out, 3));
  }
  return ParseDpkgQuery(out->stdout_text);
}

Result<std::set<std::string>> QueryHeld(const StepTarget& target, std::chrono::milliseconds timeout) {
  auto out = target.RunCheck({"apt-mark", "showhold"}, timeout);
  if (!out.ok()) return out.status();
  if (out->exit_code != 0) {
    return Unavailable("apt-mark showhold exited " + std::to_string(out->exit_code) + ": " + OutputTail(*out, 3));
  }
  return ParseShowHold(out->stdout_text);
}

std::map<std::string, std::string> AptEnv() { return {{"DEBIAN_FRONTEND", "noninteractive"}}; }

}  // namespace gpuctl::provision
