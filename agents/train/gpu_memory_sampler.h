// GPU memory sampling: each running job's memory on each GPU now and at the
// run's peak (the pure AttributeGpuMemory and UpdateGpuMemory,
// job_gpu_memory.h), and gpu_memory_high when a job's GPU passes 95%. At
// most every interval, and only while a job runs.
#pragma once

#include <chrono>
#include <functional>

#include "agents/sys/gpu_types.h"
#include "agents/sys/process_control.h"
#include "agents/train/job_part.h"

namespace gpuctl::train {

class GpuMemorySampler final : public JobPart {
 public:
  // `read_gpus` null: no sampling.
  GpuMemorySampler(std::function<sys::GpuReport()> read_gpus, std::chrono::milliseconds interval,
                   sys::ProcessControl& processes);

  void Tick(JobTable& table, TimePoint now) override;

 private:
  std::function<sys::GpuReport()> read_gpus_;
  const std::chrono::milliseconds interval_;
  sys::ProcessControl& processes_;
  TimePoint next_sample_{};
};

}  // namespace gpuctl::train
