// The job table: every job the agent knows, by name, and the one place job
// state lives. The owner thread (job_owner_loop.h) alone writes it, through
// the parts registered with the loop; every other thread reads snapshots:
// immutable copies of each record, published when an entry changed. The
// snapshot's lock is held only for a copy, never across a subprocess, an
// fsync or an open of a file a job can touch.
#pragma once

#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <set>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "agents/sys/clock.h"
#include "agents/train/job_record.h"
#include "agents/train/job_store.h"
#include "agents/train/log_ingest.h"
#include "common/status.h"

namespace gpuctl::train {

// One job: its current run's record, its log reader, and what the parts
// keep of the run beside the record (never saved).
struct JobEntry {
  JobRecord record;
  LogIngest ingest;
  // Stop escalation (stop_escalation.h): the SIGKILL went out; after it,
  // when to look again.
  bool kill_sent = false;
  std::chrono::steady_clock::time_point recheck_at{};
  // GPU processes (gpu_owners.h): this run's pids seen on GPUs; the run's
  // before it (an OOM relaunch, a rerun), told apart as that run's for a
  // while after it ended.
  std::set<uint32_t> gpu_pids;
  std::set<uint32_t> previous_gpu_pids;
  int64_t previous_ended_unix_ms = 0;

 private:
  friend class JobTable;
  int64_t last_save_ms = 0;
  uint64_t saved_offset = 0;
};

// Job events for the agent's event stream (JobSupervisorOptions::publish).
using JobEventSink = std::function<void(std::string kind, std::string job, std::string message, nlohmann::json fields)>;

class JobTable {
 public:
  JobTable(const JobStore& store, const sys::Clock& clock, JobEventSink publish);

  // --- the owner thread only ---

  // Adds an entry for `record`, replacing the one of its name (a reference
  // to that one is invalid after). Saves and publishes nothing.
  JobEntry& Put(JobRecord record);
  // Null when there is no such job.
  JobEntry* Find(const std::string& name);
  // Forgets the job, its snapshot with it (its files are the store's).
  void Erase(const std::string& name);
  // Every entry, in name order. `visit` must not Put or Erase: a pass that
  // may replace entries takes Names() first.
  void ForEach(const std::function<void(JobEntry&)>& visit);
  void ForEach(const std::function<void(const JobEntry&)>& visit) const;
  std::vector<std::string> Names() const;

  // Saves the entry's record (an error is logged and returned: the caller
  // must not act as if it were saved).
  Status Save(JobEntry& entry);
  // Whether progress that only moved the log offset is due a save: at most
  // every 2 s (events and ends are saved at once).
  bool ProgressSaveDue(const JobEntry& entry, int64_t now_unix_ms) const;
  // Makes the entry's record what readers see.
  void Publish(const JobEntry& entry);
  // An event for the agent's stream; fields carry the run id.
  void PublishEvent(const std::string& kind, const JobRecord& record, const std::string& message,
                    nlohmann::json fields);

  int64_t NowMs() const;
  const sys::Clock& clock() const { return clock_; }
  const JobStore& store() const { return store_; }

  // --- any thread ---

  std::shared_ptr<const JobRecord> Snapshot(const std::string& name) const;
  // Every job's snapshot, oldest first.
  std::vector<JobRecord> SnapshotAll() const;
  // Blocks until `name`'s snapshot is no longer active (an unreadable
  // record's run being stopped: until its stop clears), is gone, or
  // `deadline`, or ReleaseWaiters.
  void WaitForEnd(const std::string& name, std::chrono::steady_clock::time_point deadline);
  // Wakes every WaitForEnd, now and later: the agent stops. Idempotent.
  void ReleaseWaiters();
  // Followers ask at each end of file whether their job ended: many of one
  // job share one check per 200 ms of real time.
  bool EndCheckDue(const std::string& name);

 private:
  const JobStore& store_;
  const sys::Clock& clock_;
  JobEventSink publish_;

  std::map<std::string, std::unique_ptr<JobEntry>> entries_;  // the owner thread's alone

  mutable std::mutex snapshot_mutex_;
  std::condition_variable snapshot_changed_;
  std::map<std::string, std::shared_ptr<const JobRecord>> snapshot_;
  bool released_ = false;
  std::map<std::string, std::chrono::steady_clock::time_point> end_checked_at_;
};

}  // namespace gpuctl::train
