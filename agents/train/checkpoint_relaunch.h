// Relaunches from the last complete checkpoint: a part that takes runs
// ended failed that are to be relaunched (a hang's stop under --on-hang
// recover; any other failure under --on-fail recover, an NCCL error or a
// signal, but not a CUDA OOM that --on-oom recover takes, nor a user's
// stop) and starts the next attempt with --resume-arg naming the newest
// complete checkpoint (relaunch_lineage.h).
//
// Relaunching stops helping when runs make no progress: after
// --max-restarts-without-progress relaunches in a row that left no newer
// checkpoint than they started from (nvidia-resiliency-ext's rule), the job
// is given up on with job_gave_up.
#pragma once

#include "agents/train/job_part.h"
#include "agents/train/job_starter.h"

namespace gpuctl::train {

class CheckpointRelaunch final : public JobPart {
 public:
  explicit CheckpointRelaunch(JobStarter& starter);

  void Tick(JobTable& table, TimePoint now) override;

  // Whether `record` ended and waits for this part's decision: its GPUs
  // stay held for the relaunch meanwhile (gpu_queue.h).
  static bool Pending(const JobRecord& record);

 private:
  void Relaunch(JobTable& table, JobEntry& entry);

  JobStarter& starter_;
};

}  // namespace gpuctl::train
