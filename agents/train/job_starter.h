// Starting a run, as the parts that start runs (the GPU queue admitting a
// job, an OOM relaunch) see it: an interface, so that each is tested with
// a fake starter and the start itself (job_commands.h) stays one function.
#pragma once

#include <cstdint>
#include <optional>
#include <vector>

#include "agents/train/job_record.h"
#include "agents/train/job_spec.h"
#include "common/status.h"

namespace gpuctl::train {

// An OOM relaunch's earlier attempts and the step it has to pass.
struct Lineage {
  std::vector<AttemptRecord> attempts;
  std::optional<uint64_t> hold_step;
};

class JobStarter {
 public:
  virtual ~JobStarter() = default;
  // Starts a new run of `spec.name` (replacing its entry). `admitted`: past
  // the GPU queue (admitted from it, or an OOM relaunch on its own GPUs);
  // otherwise a job that asks for GPUs may be queued. Errors: as
  // JobSupervisor::StartJob's.
  virtual Result<JobRecord> StartRun(JobSpec spec, Lineage lineage, bool admitted) = 0;
};

}  // namespace gpuctl::train
