// The rules a job's spec follows, shared by the client (which refuses a typo
// before any connection) and the agent (which refuses what an older or other
// client sent): one rule each, so both say the same thing. The job's name has
// its own header (common/job_name.h).
#pragma once

#include <string_view>

namespace gpuctl {

// An environment variable's name as the job may be given it (--env KEY=VALUE):
// letters, digits and '_', not empty, not starting with a digit.
bool IsEnvKey(std::string_view key);

}  // namespace gpuctl
