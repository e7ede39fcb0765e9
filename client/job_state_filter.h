// --state STATE,... on `train list` and `top`, and what "ended" means to
// `train wait` and `train rm --ended`: the state words are those the
// listings show (client/output/job_state.h).
#pragma once

#include <set>
#include <string>
#include <vector>

#include "common/status.h"
#include "gpuctl/v1/jobs.pb.h"

namespace gpuctl::client {

// Every state word a user may give, in the order the help lists them.
const std::vector<std::string>& JobStateWords();

// --state's help: the words, and that an unknown one is refused.
std::string StateFlagHelp();

// The states of "running,queued" (commas, no spaces needed; spaces around a
// word are allowed). Errors: kInvalidArgument naming the unknown word and
// listing the valid ones, or for an empty list.
Result<std::set<v1::JobState>> ParseJobStates(const std::string& list);

// Keeps the jobs whose state is in `states` (all of them when it is empty).
void KeepJobsInStates(v1::ListJobsResponse& jobs, const std::set<v1::JobState>& states);

// Ended for good: nothing of it runs, none will unless started again, and
// no relaunch is pending (a run under --on-oom recover that OOMed and waits
// to be relaunched has not ended). Succeeded, failed, stopped, lost,
// killed_by_guard, orphaned and unreadable are ended; starting, running and
// queued are not.
bool JobEndedForGood(const v1::Job& job);

// What `train rm --ended` removes: a job ended for good with a result
// (succeeded, failed, stopped, lost, killed_by_guard). An unreadable record
// (evidence to read first) and an orphan (whose session may still run) are
// left to `train rm NAME`.
bool JobRemovableAsEnded(const v1::Job& job);

}  // namespace gpuctl::client
