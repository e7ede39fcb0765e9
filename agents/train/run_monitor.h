// The run monitor: the part that watches runs. A refresh of a job reads its
// log into its record, settles a run whose processes are gone (how it ended
// is decided by DecideRunEnd), calls the other parts' refresh hooks, and
// saves and publishes what changed. Its tick refreshes every active job each
// monitor interval, and at once again while a log is read only in part.
#pragma once

#include <chrono>
#include <cstddef>

#include "agents/sys/cgroup_driver.h"
#include "agents/sys/tmux.h"
#include "agents/train/guard_view.h"
#include "agents/train/job_launcher.h"
#include "agents/train/job_part.h"
#include "agents/train/run_processes.h"
#include "agents/train/unreadable_runs.h"

namespace gpuctl::train {

class RunMonitor final : public JobPart {
 public:
  // Log bytes a tick reads of each job (the rest at the next, at once). A
  // quarter MiB keeps a tick short, so a reader waits little behind one
  // (ListJobs's p99 during a catch-up of three logs: 40 ms at 1 MiB, 11 at a
  // quarter); records are saved for deciding events and at most every 2 s
  // otherwise, so smaller ticks cost no extra saves.
  static constexpr size_t kTickIngestBytes = 256 << 10;

  // `hooks`: the parts whose OnRefresh each refresh calls, in their order.
  RunMonitor(JobTable& table, const JobParts& hooks, RunProcesses& processes, UnreadableRuns& unreadable,
             GuardView& guard, JobLauncher& launcher, sys::Tmux& tmux, std::chrono::milliseconds interval);

  // Reads up to `ingest_bytes` of the log (0: only the end is looked for),
  // settles an ended run, calls the hooks; saves and publishes what changed.
  void Refresh(JobEntry& entry, size_t ingest_bytes);
  // A run recorded as starting whose session (with its run id) exists:
  // recorded as running with the session's pane. False when not found.
  bool AdoptLaunched(JobEntry& entry);
  // The log of `record` has bytes not read yet: the next pass reads them.
  void NoteBacklog(const JobRecord& record);

  void OnStart(JobTable& table) override;
  void Tick(JobTable& table, TimePoint now) override;
  TimePoint NextWake(const JobTable& /*table*/, TimePoint /*now*/) const override { return next_tick_; }
  bool Busy() const override { return backlog_; }

 private:
  bool SettleIfEnded(JobEntry& entry);
  // A build whose own command has exited while processes it left still run:
  // reported, killed, and true (it ends now, with its exit status).
  bool BuildExitedLeavingProcesses(JobEntry& entry);

  JobTable& table_;
  const JobParts& hooks_;
  RunProcesses& processes_;
  UnreadableRuns& unreadable_;
  GuardView& guard_;
  JobLauncher& launcher_;
  sys::Tmux& tmux_;
  const std::chrono::milliseconds interval_;
  TimePoint next_tick_{};
  bool backlog_ = false;
};

}  // namespace gpuctl::train
