// What dpkg says is installed and what apt holds, parsed apart from asking.
#pragma once

#include <map>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include "agents/provision/step_target.h"

namespace gpuctl::provision {

struct InstalledPackage {
  std::string version;  // "590.44.01-1"
  bool installed = false;
};

// Lines of `dpkg-query -W -f='${Package} ${Status} ${Version}\n'`:
// "nvidia-open install ok installed 590.44.01-1". Packages dpkg knows but that
// are not installed ("... unknown ok not-installed ") come back not installed.
std::map<std::string, InstalledPackage> ParseDpkgQuery(std::string_view text);
// `apt-mark showhold`: one package per line.
std::set<std::string> ParseShowHold(std::string_view text);
// "590.44.01-1" -> "590.44.01"; "1:2.3-4ubuntu1" -> "2.3".
std::string UpstreamVersion(std::string_view debian_version);

// dpkg-query for `names` (exact names or dpkg globs like cuda-toolkit-[0-9]*);
// packages dpkg has never heard of are simply absent. Errors: the command
// could not run.
Result<std::map<std::string, InstalledPackage>> QueryPackages(const StepTarget& target,
                                                              const std::vector<std::string>& names,
                                                              std::chrono::milliseconds timeout);
Result<std::set<std::string>> QueryHeld(const StepTarget& target, std::chrono::milliseconds timeout);

// apt needs no questions answered.
std::map<std::string, std::string> AptEnv();

}  // namespace gpuctl::provision
