// The guard's view of the jobs: the running ones, an immutable copy behind
// a lock of its own (the guard never waits for the owner between its line
// and its kill), and the kills it and the build governor announce for a run,
// which the run's end (run_monitor.h) takes as its explanation.
#pragma once

#include <cstdint>
#include <map>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include "agents/train/job_table.h"

namespace gpuctl::train {

// What the memory guard needs to know of a running job: an immutable copy.
struct GuardedJob {
  std::string name;
  std::string run_id;
  std::string cgroup;  // empty: none
  int64_t pgid = 0;
  // For the build governor (agents/build): the job's kind, its memory limit
  // (a build's budget) and where it runs.
  std::string kind;
  std::optional<uint64_t> mem_limit_bytes;
  std::string cwd;
  bool stop_requested = false;  // ending: a build is no longer governed
};

class GuardView {
 public:
  // `default_cwd`: where a job whose spec names no directory runs.
  explicit GuardView(std::string default_cwd);

  // --- any thread ---
  std::vector<GuardedJob> RunningJobs() const;
  // The guard is about to kill run `run_id`: its end is killed_by_guard.
  void MarkKilledByGuard(const std::string& run_id, const std::string& reason);
  // The build governor is about to kill run `run_id`: its end is failed.
  void MarkFailed(const std::string& run_id, const std::string& reason);

  // --- the owner thread ---
  // The running jobs as the table has them now.
  void Update(JobTable& table);
  struct EndMarks {
    std::optional<std::string> guard_kill;
    std::optional<std::string> failure;
  };
  // What was announced for run `run_id`, taken: forgotten once read.
  EndMarks TakeMarks(const std::string& run_id);

 private:
  const std::string default_cwd_;
  mutable std::mutex mutex_;
  std::vector<GuardedJob> running_;
  std::map<std::string, std::string> guard_kills_;  // run id -> reason
  std::map<std::string, std::string> failures_;     // run id -> reason
};

}  // namespace gpuctl::train
