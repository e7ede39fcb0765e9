// A part of the job core: one way the agent acts on runs (the queue, OOM
// relaunch, stop escalation, reconciliation, GPU memory sampling), over the
// job table, registered with the owner loop. New ways for a run to end
// (a hang, a GPU fault) are one more part, with its own pure decision.
//
// Every method runs on the owner thread (OnStart: on the thread that starts
// the loop, before the owner thread exists), so a part touches the table
// without locks, and must not block on anything but the work it is for.
#pragma once

#include <chrono>
#include <cstdint>
#include <vector>

#include "agents/train/job_table.h"

namespace gpuctl::train {

class JobPart {
 public:
  using TimePoint = std::chrono::steady_clock::time_point;

  virtual ~JobPart() = default;

  // Once, at Start, in registration order (what exists is reconciled).
  virtual void OnStart(JobTable& /*table*/) {}
  // On every pass of the owner loop, after the posted calls ran, in
  // registration order. `now`: the pass's one reading of the clock (a
  // deadline computed from a later reading than it is compared with would
  // never be reached). A part checks itself whether anything is due.
  virtual void Tick(JobTable& /*table*/, TimePoint /*now*/) {}
  // When the part next needs a pass; the loop sleeps until the earliest of
  // all parts' (TimePoint::max(): no need of its own).
  virtual TimePoint NextWake(const JobTable& /*table*/, TimePoint /*now*/) const { return TimePoint::max(); }
  // Work left that must not wait (a log read in part): another pass at once.
  virtual bool Busy() const { return false; }
  // Called by every refresh of a run (run_monitor.h), after its log was read
  // and its end looked for: the part's own look at the run (a stop past its
  // deadline, a relaunch past its last step). True: the record changed and
  // is to be saved.
  virtual bool OnRefresh(JobTable& /*table*/, JobEntry& /*entry*/, int64_t /*now_unix_ms*/) { return false; }
};

// The parts, in registration order: the loop ticks them, refreshes call
// their hooks.
class JobParts {
 public:
  void Add(JobPart& part) { parts_.push_back(&part); }
  const std::vector<JobPart*>& all() const { return parts_; }

 private:
  std::vector<JobPart*> parts_;
};

}  // namespace gpuctl::train
