#include "client/node/local_gpuctld.h"

#include <sys/auxv.h>

#include <cstdlib>
#include <filesystem>
#include <sstream>
#include <vector>

#include "agents/sys/files.h"

namespace gpuctl::client {
namespace {

// The path this program was executed as (execve's filename; execvp has
// already resolved PATH), made absolute with symlinks resolved: where the
// running gpuctl really is.
std::filesystem::path RunningProgramDir() {
  const char* exec_path = reinterpret_cast<const char*>(getauxval(AT_EXECFN));
  if (!exec_path) return {};
  std::error_code ignored;
  std::filesystem::path resolved = std::filesystem::weakly_canonical(exec_path, ignored);
  return resolved.parent_path();
}

}  // namespace

Result<std::string> FindLocalGpuctld(const std::string& override_path) {
  if (!override_path.empty()) {
    if (!sys::IsExecutableFile(override_path)) {
      return NotFound("--gpuctld " + override_path + " is not an executable file");
    }
    return override_path;
  }
  std::vector<std::string> candidates;
  std::filesystem::path dir = RunningProgramDir();
  if (!dir.empty()) {
    candidates.push_back((dir / "gpuctld").string());
    candidates.push_back((dir.parent_path() / "daemon" / "gpuctld").string());
  }
  if (const char* path = std::getenv("PATH")) {
    std::istringstream entries(path);
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
