// The rule for a job's name: one rule, shared by the agent and the client, so
// a typo is refused before any connection and both say the same thing.
#pragma once

#include <string_view>

#include "common/status.h"

namespace gpuctl {

// [A-Za-z0-9._-]{1,64}, not "." or "..": names become file and tmux names.
// kInvalidArgument says what is allowed.
Status ValidateJobName(std::string_view name);

// A name for a new job: ValidateJobName, and not starting with '-', which
// every command line would read as a flag (the hints printed for such a
// job would fail). Records of older jobs so named stay readable.
Status ValidateNewJobName(std::string_view name);

}  // namespace gpuctl
