#include "client/node/local_gpuctld.h"

#include <sstream>
#include <vector>

#include "agents/sys/environment.h"
#include "agents/sys/files.h"
#include "agents/sys/paths.h"

namespace gpuctl::client {

Result<std::string> FindLocalGpuctld(const std::string& override_path) {
  if (!override_path.empty()) {
    if (!sys::IsExecutableFile(override_path)) {
      return NotFound("--gpuctld " + override_path + " is not an executable file");
    }
    return override_path;
  }
  std::vector<std::string> candidates;
  // Where this gpuctl really is (links resolved): its gpuctld sits beside it
  // when installed, in ../daemon in a build tree.
  std::string dir = sys::RunningProgramDir();
  if (!dir.empty()) {
    candidates.push_back(sys::JoinPath(dir, "gpuctld"));
    candidates.push_back(sys::JoinPath(sys::ParentDir(dir), "daemon/gpuctld"));
  }
  if (std::optional<std::string> path = sys::EnvironmentVariable("PATH")) {
    std::istringstream entries(*path);
    std::string entry;
    while (std::getline(entries, entry, ':')) {
      if (!entry.empty()) candidates.push_back(entry + "/gpuctld");
    }
  }
  for (const std::string& candidate : candidates) {
    if (sys::IsExecutableFile(candidate)) return candidate;
  }
  return NotFound("cannot find the gpuctld binary to install (looked beside gpuctl, in ../daemon and on PATH); "
                  "give it with --gpuctld PATH");
}

}  // namespace gpuctl::client
