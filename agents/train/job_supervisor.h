// Starts, watches, stops and re-adopts training jobs. Jobs never depend on
// the agent: they live in tmux, write their own log and exit status, and a
// restarted agent picks them up from their records.
//
// One monitor thread owns the watching: every `monitor_interval` it reads
// what active jobs appended to their logs (events, metrics) and checks
// whether they ended. Calls from RPC handlers take the same lock briefly.
#pragma once

#include <chrono>
#include <condition_variable>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "agents/sys/cgroup_driver.h"
#include "agents/sys/clock.h"
#include "agents/sys/command_runner.h"
#include "agents/sys/process_control.h"
#include "agents/sys/tmux.h"
#include "agents/train/job_record.h"
#include "agents/train/job_store.h"
#include "agents/train/line_splitter.h"
#include "agents/train/log_events.h"
#include "agents/train/metrics.h"

namespace gpuctl::train {

struct JobSupervisorOptions {
  std::string state_dir;
  // Where a Proxmox LXC container's root filesystem appears on the host
  // ({vmid} is replaced); job logs inside it are read from here.
  std::string lxc_rootfs_template = "/var/lib/lxc/{vmid}/rootfs";
  // Where jobs inside a container keep their files (a path inside it).
  std::string container_state_dir = "/var/lib/gpuctl";
  std::string pct = "pct";
  // The working directory of a host job whose spec names none: a client on
  // another host (gpuctl --node) has no directory here to give. The agent
  // user's home, as `ssh host CMD` would use.
  std::string default_cwd = "/";
  std::chrono::milliseconds monitor_interval{250};
  // Memory cgroups for jobs: each host job gets PARENT/NAME with a memory
  // limit. Null: jobs run without a cgroup of their own.
  sys::CgroupDriver* cgroups = nullptr;
  std::string cgroup_parent = "/gpuctl";
  std::optional<uint64_t> default_mem_limit_bytes;
  // Job events for the agent's event stream (job_started, job_ended and
  // each event read from a log). Called under the supervisor's lock: must
  // not block or call back.
  std::function<void(std::string kind, std::string job, std::string message, nlohmann::json fields)> publish;
};

// What the memory guard needs to know of a running job.
struct GuardedJob {
  std::string name;
  std::string cgroup;  // empty: none
  int64_t pgid = 0;
};

// Where to read a job's log, and whether more can come.
struct LogSource {
  std::string path;
  bool ended = false;
};

class JobSupervisor {
 public:
  JobSupervisor(JobSupervisorOptions options, sys::Tmux& tmux, sys::ProcessControl& processes,
                sys::CommandRunner& runner, const sys::Clock& clock);
  ~JobSupervisor();

  // Loads the records, re-adopts jobs that still run, settles those that
  // ended while the agent was away, and starts the monitor thread.
  void Start();
  // Stops the monitor thread (jobs keep running). Idempotent.
  void Shutdown();

  // Errors: kInvalidArgument for a bad spec, a missing or non-executable
  // script; kAlreadyExists when a job of that name is running; kFailedPrecondition
  // for a container that does not exist or is stopped; tmux errors otherwise.
  // On error nothing was started and no record changed.
  Result<JobRecord> StartJob(JobSpec spec);
  Result<JobRecord> GetJob(const std::string& name);
  std::vector<JobRecord> ListJobs();
  // SIGTERM to the job's process group, SIGKILL after `grace`, then the tmux
  // session is removed. Blocks up to `grace` plus a little.
  Result<JobRecord> StopJob(const std::string& name, std::chrono::milliseconds grace);
  Result<LogSource> GetLogSource(const std::string& name);

  // Running jobs, for the memory guard to weigh.
  std::vector<GuardedJob> RunningJobs();
  // Called by the guard just before it kills the job: when the job's end is
  // seen, its state becomes killed_by_guard with this reason.
  void MarkKilledByGuard(const std::string& name, const std::string& reason);

 private:
  struct LiveJob {
    JobRecord record;
    LineSplitter lines;
    LogEventParser events;
    std::unique_ptr<MetricsTracker> metrics;
    int64_t last_save_ms = 0;
    uint64_t saved_offset = 0;  // record.parsed_offset as last saved
    bool event_cap_logged = false;
  };

  Status CheckContainerRunning(const std::string& vmid);
  std::string HostPathForContainer(const std::string& vmid, const std::string& inside) const;
  // Reads new log bytes and checks for an ended job; saves on change.
  void RefreshLocked(LiveJob& job);
  bool ReadNewLogLocked(LiveJob& job);
  bool SettleIfEndedLocked(LiveJob& job);
  void SaveLocked(const JobRecord& record);
  int64_t NowMs() const;
  void MonitorLoop();
  LiveJob& AddLocked(JobRecord record);

  JobSupervisorOptions options_;
  JobStore store_;
  sys::Tmux& tmux_;
  sys::ProcessControl& processes_;
  sys::CommandRunner& runner_;
  const sys::Clock& clock_;

  std::mutex mutex_;
  std::condition_variable wake_;
  bool stopping_ = false;
  std::map<std::string, std::unique_ptr<LiveJob>> jobs_;
  std::thread monitor_;

  // The guard's view, behind a lock of its own: the guard must never wait
  // for log parsing or a record's fsync between the line and the kill.
  void UpdateGuardedLocked();
  std::mutex guard_mutex_;
  std::vector<GuardedJob> guarded_;
  std::map<std::string, std::string> guard_kills_;  // job -> reason, until settled
};

}  // namespace gpuctl::train
