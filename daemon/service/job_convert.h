// Jobs between the wire and the plain model.
#pragma once

#include "agents/train/job_record.h"
#include "gpuctl/v1/jobs.pb.h"

namespace gpuctl::daemon {

// Errors: kInvalidArgument for an --on-oom or --oom-knob the agent cannot read.
Result<train::JobSpec> FromProto(const v1::JobSpec& in);
void ToProto(const train::JobRecord& in, v1::Job& out);

}  // namespace gpuctl::daemon
