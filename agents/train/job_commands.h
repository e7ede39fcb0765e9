// What callers ask of jobs, carried out on the owner thread: start a run
// (record first, durable, before anything of it runs), stop one (the
// request saved before the first signal), remove an ended job. Each works
// on the job table through the parts: the queue places a start, the
// monitor refreshes, unreadable records have their own stop.
#pragma once

#include <chrono>
#include <string>

#include "agents/train/gpu_queue.h"
#include "agents/train/guard_view.h"
#include "agents/train/job_launcher.h"
#include "agents/train/job_starter.h"
#include "agents/train/job_table.h"
#include "agents/train/run_monitor.h"
#include "agents/train/run_processes.h"
#include "agents/train/unreadable_runs.h"

namespace gpuctl::train {

class JobCommands final : public JobStarter, public JobStopper {
 public:
  // `default_cwd`: a host job's directory when its spec names none.
  JobCommands(JobTable& table, JobLauncher& launcher, RunMonitor& monitor, GpuQueue& queue,
              UnreadableRuns& unreadable, RunProcesses& processes, GuardView& guard, std::string default_cwd);

  Result<JobRecord> StartRun(JobSpec spec, Lineage lineage, bool admitted) override;
  // SIGTERM now, the request and its deadline saved first; the escalation
  // is stop_escalation.h's. A queued job is cancelled.
  Result<JobRecord> BeginStop(const std::string& name, std::chrono::milliseconds grace);
  Result<JobRecord> BeginAgentStop(const std::string& name, std::chrono::milliseconds grace, AgentStop cause) override;
  // only_run: when not empty, the run that may be removed (removal_check.h).
  Result<JobRecord> Remove(const std::string& name, const std::string& only_run = "");

 private:
  JobTable& table_;
  JobLauncher& launcher_;
  RunMonitor& monitor_;
  GpuQueue& queue_;
  UnreadableRuns& unreadable_;
  RunProcesses& processes_;
  GuardView& guard_;
  const std::string default_cwd_;
};

}  // namespace gpuctl::train
