// Whether `train rm` may remove a job's record now, beyond "it has ended":
// not a run other than the one the caller listed (`train rm --ended` lists,
// then removes; the job may have been started again, and even ended, in
// between), and not a failed run whose relaunch is still to come (removing
// it would lose the job the agent is about to start again).
#pragma once

#include <string>

#include "agents/train/job_record.h"
#include "common/status.h"

namespace gpuctl::train {

// OK, or kFailedPrecondition saying why. only_run empty: any run.
Status CheckRemoval(const JobRecord& record, const std::string& only_run);

}  // namespace gpuctl::train
