// OOM relaunch (--on-oom recover): a run that failed with CUDA OOM, its log
// read to the end, is decided on once for the whole job (the pure
// DecideOomRemediation, oom_remediation.h) and relaunched as a new run of
// the same job with the changed settings, its GPUs and its lineage; or
// given up on. A relaunched run that passes the step its last attempt
// reached says the change held (oom_remediation_held).
#pragma once

#include "agents/train/job_part.h"
#include "agents/train/job_starter.h"

namespace gpuctl::train {

class OomRelaunch final : public JobPart {
 public:
  explicit OomRelaunch(JobStarter& starter);

  // Every failed run due a decision: decided, relaunched or given up.
  void Tick(JobTable& table, TimePoint now) override;
  // A relaunched run past its last attempt's step: oom_remediation_held.
  bool OnRefresh(JobTable& table, JobEntry& entry, int64_t now_unix_ms) override;

  // Whether `record` is a run about to be relaunched (or given up on): its
  // GPUs stay held for the relaunch meanwhile (gpu_queue.h).
  static bool Pending(const JobRecord& record);

 private:
  void Remediate(JobTable& table, JobEntry& entry);

  JobStarter& starter_;
};

}  // namespace gpuctl::train
