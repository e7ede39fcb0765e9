#include "client/job_state_filter.h"

#include <algorithm>
#include <iterator>

#include "client/output/job_state.h"

namespace gpuctl::client {
namespace {

// The states a job can be in, in the order a run goes through them.
constexpr v1::JobState kAllJobStates[] = {
    v1::JOB_STATE_QUEUED, v1::JOB_STATE_STARTING, v1::JOB_STATE_RUNNING,         v1::JOB_STATE_SUCCEEDED,
    v1::JOB_STATE_FAILED, v1::JOB_STATE_STOPPED,  v1::JOB_STATE_KILLED_BY_GUARD, v1::JOB_STATE_LOST,
    v1::JOB_STATE_ORPHANED, v1::JOB_STATE_UNREADABLE,
};

std::string TrimSpaces(const std::string& word) {
  size_t begin = word.find_first_not_of(' ');
  if (begin == std::string::npos) return "";
  return word.substr(begin, word.find_last_not_of(' ') - begin + 1);
}

}  // namespace

const std::vector<std::string>& JobStateWords() {
  static const std::vector<std::string> words = [] {
    std::vector<std::string> out;
    for (v1::JobState state : kAllJobStates) out.push_back(JobStateName(state));
    return out;
  }();
  return words;
}

std::string StateFlagHelp() {
  std::string words;
  for (const std::string& word : JobStateWords()) words += (words.empty() ? "" : ", ") + word;
  return "Only jobs in these states, comma-separated: " + words + " (an unknown one is refused, exit 2)";
}

Result<std::set<v1::JobState>> ParseJobStates(const std::string& list) {
  std::string valid;
  for (const std::string& word : JobStateWords()) valid += (valid.empty() ? "" : ", ") + word;
  std::set<v1::JobState> states;
  size_t start = 0;
  while (start <= list.size()) {
    size_t comma = std::min(list.find(',', start), list.size());
    std::string word = TrimSpaces(list.substr(start, comma - start));
    start = comma + 1;
    if (word.empty()) continue;
    auto known = std::find_if(std::begin(kAllJobStates), std::end(kAllJobStates),
                              [&word](v1::JobState s) { return word == JobStateName(s); });
    if (known == std::end(kAllJobStates)) {
      return InvalidArgument("--state: unknown state '" + word + "' (valid: " + valid + ")");
    }
    states.insert(*known);
  }
  if (states.empty()) return InvalidArgument("--state needs at least one state (valid: " + valid + ")");
  return states;
}

void KeepJobsInStates(v1::ListJobsResponse& jobs, const std::set<v1::JobState>& states) {
  if (states.empty()) return;
  auto* list = jobs.mutable_jobs();
  list->erase(std::remove_if(list->begin(), list->end(),
                             [&states](const v1::Job& job) { return !states.contains(job.state()); }),
              list->end());
}

bool JobEndedForGood(const v1::Job& job) {
  switch (job.state()) {
    case v1::JOB_STATE_SUCCEEDED:
    case v1::JOB_STATE_FAILED:
    case v1::JOB_STATE_STOPPED:
    case v1::JOB_STATE_LOST:
    case v1::JOB_STATE_KILLED_BY_GUARD:
    case v1::JOB_STATE_ORPHANED:
    case v1::JOB_STATE_UNREADABLE:
      return !job.relaunch_pending();
    default:
      return false;
  }
}

bool JobRemovableAsEnded(const v1::Job& job) {
  return JobEndedForGood(job) && job.state() != v1::JOB_STATE_ORPHANED && job.state() != v1::JOB_STATE_UNREADABLE;
}

}  // namespace gpuctl::client
