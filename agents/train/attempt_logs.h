// Which log holds which attempt of a job, for `train logs --attempt N` and
// for a follower that goes on across relaunches. A relaunch keeps the ended
// attempt's log aside, whole, as output.log.RUN_ID (relaunch_lineage.h); the
// current run writes output.log, or nothing yet while it is queued.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "agents/train/job_record.h"
#include "common/status.h"

namespace gpuctl::train {

struct AttemptLog {
  uint32_t attempt = 1;
  std::string run_id;
  std::string path;  // empty while queued: nothing is written yet
  // An earlier attempt's log, kept aside: complete, it grows no more.
  bool whole = false;
  bool queued = false;
  std::string waiting_for;  // queued: for what
  // What the relaunch into this attempt changed (none for the first).
  std::vector<std::string> changes;
};

// The attempt the job's current run is (1 for the run the user started).
uint32_t CurrentAttempt(const JobRecord& record);

// Attempt `n`'s log; 0 is the current run. kNotFound for an attempt the
// record does not hold, naming the ones it does.
Result<AttemptLog> FindAttemptLog(const JobRecord& record, uint32_t n);

// The earlier attempt that ran as `run_id`, if the record keeps it.
std::optional<AttemptLog> FindAttemptByRun(const JobRecord& record, const std::string& run_id);

// The current run has ended and a relaunch (an OOM's, a checkpoint's) is
// still to come: its end is not the job's.
bool RelaunchPending(const JobRecord& record);

// Where a relaunch keeps the log of the run `log` is aside, once it ends.
std::string KeptAsidePath(const AttemptLog& log);

}  // namespace gpuctl::train
