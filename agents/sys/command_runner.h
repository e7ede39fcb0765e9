// The seam for running other programs. Always an argv vector, never a shell
// string (no quoting bugs, no injection). The real runner uses fork/exec with
// pipes; tests use stand-in executables on PATH or a fake runner.
#pragma once

#include <chrono>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "common/status.h"

namespace gpuctl::sys {

struct CommandOutput {
  int exit_code = -1;    // -1 when killed by a signal
  int term_signal = 0;   // the signal that ended it, 0 if it exited
  std::string stdout_text;
  std::string stderr_text;
};

struct RunOptions {
  std::chrono::milliseconds timeout{10'000};
  // Extra environment entries on top of the current environment.
  std::map<std::string, std::string> env;
  std::optional<std::string> stdin_text;
  // Output beyond this many bytes per stream is dropped (the child still runs
  // to completion); keeps the agent's memory bounded.
  size_t max_output_bytes = 4 << 20;
};

class CommandRunner {
 public:
  virtual ~CommandRunner() = default;
  // Runs argv[0] (looked up on PATH when it has no '/') and waits for it.
  // Errors: kNotFound when the program is not found or not executable,
  // kUnavailable on timeout (the child is killed), kIo when pipes fail.
  // A non-zero exit is not an error: see CommandOutput::exit_code.
  virtual Result<CommandOutput> Run(const std::vector<std::string>& argv,
                                    const RunOptions& options = {}) = 0;
};

// fork/exec based runner.
std::unique_ptr<CommandRunner> MakeSubprocessRunner();

// Finds an executable on `path_env` (a PATH value); empty when not found.
std::string FindExecutable(const std::string& name, const std::string& path_env);

}  // namespace gpuctl::sys
