// Stop escalation: a stop asked with a grace (saved with its deadline, so a
// restarted agent finishes it) sends SIGKILL once the deadline passes with
// the run still there, then looks again soon: the run is about to be gone.
// The loop wakes for each deadline, whatever the monitor interval.
#pragma once

#include <cstdint>

#include "agents/train/job_part.h"
#include "agents/train/run_processes.h"

namespace gpuctl::train {

class RunMonitor;

class StopEscalation final : public JobPart {
 public:
  // Due runs are refreshed through `monitor`; signals go through `processes`.
  StopEscalation(RunMonitor& monitor, RunProcesses& processes);

  // Refreshes each run whose deadline or recheck is due (the refresh calls
  // OnRefresh, which sends the SIGKILL; an unreadable record's stop
  // escalates in its own refresh, unreadable_runs.h).
  void Tick(JobTable& table, TimePoint now) override;
  TimePoint NextWake(const JobTable& table, TimePoint now) const override;
  bool OnRefresh(JobTable& table, JobEntry& entry, int64_t now_unix_ms) override;

 private:
  // When the loop should look at `entry` next; max(): not for a stop.
  static TimePoint DueAt(const JobEntry& entry, TimePoint now, int64_t now_unix_ms);

  RunMonitor& monitor_;
  RunProcesses& processes_;
};

}  // namespace gpuctl::train
