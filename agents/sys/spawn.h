// Starting a child process (posix_spawn): the spawn half of the subprocess runner.
// The child gets pipes (or /dev/null) on 0-2, no other descriptors, default
// signal dispositions and an empty signal mask, and its own process group so
// it can be killed together with whatever it starts.
#pragma once

#include <sys/types.h>

#include <map>
#include <string>
#include <vector>

#include "agents/sys/unique_fd.h"
#include "common/status.h"

namespace gpuctl::sys {

struct SpawnedChild {
  pid_t pid = -1;         // also the process group id
  UniqueFd stdin_write;   // invalid unless with_stdin
  UniqueFd stdout_read;
  UniqueFd stderr_read;
};

// Runs `path` (absolute or relative; no PATH lookup here) with `argv` and the
// current environment plus `extra_env`. Returns once exec has succeeded.
// Errors: kNotFound when exec fails (the child's errno, e.g. "cannot run
// '/x': Permission denied"), kIo when pipes cannot be made.
Result<SpawnedChild> SpawnChild(const std::string& path, const std::vector<std::string>& argv,
                                const std::map<std::string, std::string>& extra_env, bool with_stdin);

}  // namespace gpuctl::sys
