// The client's check of a job name: the agent's own rule (common/job_name.h),
// so a typo is refused before any connection.
#pragma once

#include "common/job_name.h"

namespace gpuctl::client {

using ::gpuctl::ValidateJobName;
using ::gpuctl::ValidateNewJobName;

}  // namespace gpuctl::client
