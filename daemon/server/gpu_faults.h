// Failing GPUs, as the agent runs them: the drain set on disk
// (STATE_DIR/gpu-drains.json), the fault watch over the kernel log and the
// GPUs' readings, which drains a faulted GPU and stops the jobs on it, and
// `gpuctl gpu drain|undrain` by hand.
#pragma once

#include <memory>
#include <string>

#include "agents/events/event_log.h"
#include "agents/health/gpu_drains.h"
#include "agents/health/gpu_fault_watch.h"
#include "agents/health/health_sampler.h"
#include "agents/train/job_supervisor.h"
#include "common/status.h"
#include "gpuctl/v1/agent.pb.h"

namespace gpuctl::daemon {

class GpuFaults {
 public:
  // Loads the drain set (a corrupt file is logged and nothing can be
  // drained until it is fixed: never taken for "none drained"), marks
  // `sampler`'s GPUs with their drains, and starts the watch reading
  // `kernel_log` ("off": none; one that cannot be opened is logged).
  GpuFaults(const std::string& state_dir, const std::string& kernel_log, health::HealthSampler& sampler,
            train::JobSupervisor& jobs, events::EventLog& events, const sys::Clock& clock);
  ~GpuFaults();

  // `gpu`: an index, a UUID or a PCI bus id. Errors: kNotFound (no such
  // GPU), kFailedPrecondition (undrain of a GPU that still reads faulty,
  // without `force`), the drain file's.
  Result<v1::GpuDrainState> Drain(const std::string& gpu, const std::string& reason);
  Result<v1::GpuDrainState> Undrain(const std::string& gpu, bool force);
  // Stops the watch (at agent shutdown, before the job supervisor).
  void Stop() { watch_->Stop(); }

 private:
  Result<sys::GpuDevice> FindGpu(const std::string& gpu);
  v1::GpuDrainState StateOf(const sys::GpuDevice& gpu);

  health::GpuDrains drains_;
  health::HealthSampler& sampler_;
  events::EventLog& events_;
  const sys::Clock& clock_;
  std::unique_ptr<health::GpuFaultWatch> watch_;
};

}  // namespace gpuctl::daemon
