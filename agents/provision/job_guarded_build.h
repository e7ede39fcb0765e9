// Guarded builds as training jobs: JobSupervisor starts the build detached in
// tmux, in a memory cgroup of its own with the budget as its limit, where the
// memory guard sees and, if need be, kills it; this waits for its end.
#pragma once

#include <chrono>

#include "agents/provision/guarded_build.h"
#include "agents/sys/clock.h"
#include "agents/train/job_supervisor.h"

namespace gpuctl::provision {

class JobGuardedBuildRunner final : public GuardedBuildRunner {
 public:
  // `clock` times the build's timeout and paces the polls of its state.
  JobGuardedBuildRunner(train::JobSupervisor& jobs, const sys::Clock& clock,
                        std::chrono::milliseconds poll = std::chrono::milliseconds(500));
  Result<sys::CommandOutput> Run(const GuardedBuild& build) override;

 private:
  train::JobSupervisor& jobs_;
  const sys::Clock& clock_;
  std::chrono::milliseconds poll_;
};

}  // namespace gpuctl::provision
