// gpuctld's command line -> DaemonConfig (file first, then flags on top).
#pragma once

#include <string>

#include "common/status.h"
#include "daemon/config/daemon_config.h"

namespace gpuctl::daemon {

struct FlagsOutcome {
  DaemonConfig config;
  // Set when the flags asked for --help or --version: print it and exit 0.
  std::string print_and_exit;
};

// Errors are usage errors (exit 2); the message says what was wrong.
Result<FlagsOutcome> ParseDaemonFlags(int argc, const char* const* argv);

}  // namespace gpuctl::daemon
