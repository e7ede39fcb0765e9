// What every relaunch of a run does with the run that ended (an OOM's, a
// hang's, any failure's under --on-fail recover): its attempt goes into the
// lineage with its own log kept aside (output.log.RUN_ID), and the next
// attempt resumes from the newest complete checkpoint, when the job names
// where they are.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "agents/sys/checkpoint_scan.h"
#include "agents/train/job_record.h"
#include "agents/train/job_starter.h"

namespace gpuctl::train {

// The lineage of the run after `r`: r's attempt added, with `changes` (what
// the relaunch changes). Renames r's log to output.log.RUN_ID and points r
// at it.
Lineage EndAttempt(JobRecord& r, std::vector<std::string> changes);

// The newest complete checkpoint under the job's --checkpoint-dir (none
// without one). Called once the run's processes are gone: nothing of it
// holds a file open.
std::optional<sys::Checkpoint> ResumePoint(const JobSpec& spec, int64_t now_unix_ms);

// `next` resumes from `checkpoint` (or from scratch without one), and the
// change is said in `changes`.
void ResumeFrom(JobSpec& next, const std::optional<sys::Checkpoint>& checkpoint, std::vector<std::string>& changes);

}  // namespace gpuctl::train
