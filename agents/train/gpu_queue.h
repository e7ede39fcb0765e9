// The GPU queue: a job that asks for GPUs (--gpus, --num-gpus, --gpu-mem)
// and cannot have them now is recorded as queued (durable, so the queue
// survives a restart) and admitted in order, higher priority first then
// first come, as soon as a pass of the owner loop finds its GPUs free. Both
// decisions are pure (gpu_placement.h: DecideStartPlacement at a start,
// PlanAdmissions for a pass); this part reads the GPUs, describes them as
// the table has them, and carries the decisions out.
#pragma once

#include <chrono>
#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "agents/sys/gpu_types.h"
#include "agents/sys/process_control.h"
#include "agents/train/gpu_placement.h"
#include "agents/train/job_part.h"
#include "agents/train/job_starter.h"

namespace gpuctl::train {

class GpuQueue final : public JobPart {
 public:
  // A pass at most this often: a GPU reading may be an nvidia-smi run, on
  // the owner thread.
  static constexpr std::chrono::milliseconds kAdmitInterval{200};

  // `read_gpus` null: no queue (every job starts as asked). A GPU is busy
  // when processes the agent did not start use `busy_below_bytes` of it.
  // `starter` starts the admitted.
  GpuQueue(JobTable& table, std::function<sys::GpuReport()> read_gpus, uint64_t busy_below_bytes,
           sys::ProcessControl& processes, JobStarter& starter);

  // A new job, at its start (before its run's record): nullopt when it is to
  // start now (`spec.gpus` then names the GPUs chosen for it, if any); else
  // the start's answer: refused, or its record as queued.
  std::optional<Result<JobRecord>> Place(JobSpec& spec, Lineage& lineage, uint32_t restarts);

  // An admission pass (rate-limited).
  void Tick(JobTable& table, TimePoint now) override;

 private:
  Result<JobRecord> Enqueue(JobSpec spec, Lineage lineage, std::string waiting_for, uint32_t restarts);
  void FailQueued(const std::string& name, const std::string& why);
  // The GPUs as the queue sees them: held by the jobs given them (and by a
  // run about to be relaunched after an OOM), the agent's own processes told
  // from others'.
  std::vector<GpuSlot> Slots(const sys::GpuReport& report);

  JobTable& table_;
  std::function<sys::GpuReport()> read_gpus_;
  const uint64_t busy_below_bytes_;
  sys::ProcessControl& processes_;
  JobStarter& starter_;
  TimePoint next_admission_{};
};

}  // namespace gpuctl::train
