// The client's check of a job name, the same rule the agent applies
// (agents/train/job_spec.h), so a typo is refused before any connection.
#pragma once

#include <string_view>

#include "common/status.h"

namespace gpuctl::client {

// [A-Za-z0-9._-]{1,64}, not "." or "..": names become file and tmux names.
// kInvalidArgument says what is allowed.
Status ValidateJobName(std::string_view name);

}  // namespace gpuctl::client
