// Reconciliation at agent start: the records are loaded, tmux sessions no
// record claims are adopted as orphaned, an unreadable record's live run is
// found, what a log gained while no agent read it is to be read, a run
// recorded as starting whose launch landed is adopted, and every active run
// is refreshed (a stop a restart interrupted is finished by the monitor and
// stop escalation from its saved deadline).
#pragma once

#include "agents/sys/tmux.h"
#include "agents/train/guard_view.h"
#include "agents/train/job_launcher.h"
#include "agents/train/job_part.h"
#include "agents/train/run_monitor.h"
#include "agents/train/unreadable_runs.h"

namespace gpuctl::train {

class Reconciliation final : public JobPart {
 public:
  Reconciliation(sys::Tmux& tmux, JobLauncher& launcher, RunMonitor& monitor, UnreadableRuns& unreadable,
                 GuardView& guard);

  void OnStart(JobTable& table) override;

 private:
  void AdoptOrphans(JobTable& table);

  sys::Tmux& tmux_;
  JobLauncher& launcher_;
  RunMonitor& monitor_;
  UnreadableRuns& unreadable_;
  GuardView& guard_;
};

}  // namespace gpuctl::train
