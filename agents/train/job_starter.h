// Starting a run, as the parts that start runs (the GPU queue admitting a
// job, an OOM relaunch) see it: an interface, so that each is tested with
// a fake starter and the start itself (job_commands.h) stays one function.
#pragma once

#include <chrono>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "agents/train/job_record.h"
#include "agents/train/job_spec.h"
#include "common/status.h"

namespace gpuctl::train {

// A relaunch's earlier attempts, the step it has to pass (an OOM's), and
// the relaunches in a row that left no newer checkpoint.
struct Lineage {
  std::vector<AttemptRecord> attempts;
  std::optional<uint64_t> hold_step;
  uint32_t restarts_without_progress = 0;
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

// A stop the agent makes itself (a hung run under --on-hang fail or
// recover): the run ends failed with `reason`, and with `relaunch` it is
// relaunched from its last complete checkpoint once ended.
struct AgentStop {
  std::string reason;
  bool relaunch = false;
  std::string cause;  // "hang", "gpu_fault": what the relaunch says it followed
};

class JobStopper {
 public:
  virtual ~JobStopper() = default;
  // As a user's stop (SIGTERM, SIGKILL past `grace`), the cause saved with
  // the request.
  virtual Result<JobRecord> BeginAgentStop(const std::string& name, std::chrono::milliseconds grace,
                                           AgentStop cause) = 0;
};

}  // namespace gpuctl::train
