// Jobs whose record cannot be read. The record is never rewritten (it is the
// evidence of what went wrong), but what of the job still runs is found by
// its names alone, so that `train stop` stops it (signals, the grace, then
// SIGKILL, all kept in memory) and `train rm` refuses while it lives
// instead of deleting a live job's log.
#pragma once

#include <chrono>

#include "agents/sys/tmux.h"
#include "agents/train/job_launcher.h"
#include "agents/train/job_table.h"
#include "agents/train/run_processes.h"

namespace gpuctl::train {

class UnreadableRuns {
 public:
  UnreadableRuns(JobTable& table, JobLauncher& launcher, RunProcesses& processes, sys::Tmux& tmux);

  // At agent start: the session and cgroup of what runs of the job.
  void FindRun(JobEntry& entry);
  bool StillRuns(const JobRecord& record);
  // SIGTERM to what runs; SIGKILL at the grace's end (Refresh).
  Result<JobRecord> BeginStop(JobEntry& entry, std::chrono::milliseconds grace);
  // A stop in progress: SIGKILL past its deadline, cleared once nothing runs.
  void Refresh(JobEntry& entry);

 private:
  JobTable& table_;
  JobLauncher& launcher_;
  RunProcesses& processes_;
  sys::Tmux& tmux_;
};

}  // namespace gpuctl::train
