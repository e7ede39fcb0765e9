// Starts, watches, stops and re-adopts training jobs. Jobs never depend on
// the agent: they live in tmux, write their own log and exit status, and a
// restarted agent picks them up from their records.
//
// One owner for job state (as oomd's engine thread and systemd-oomd's loop):
// the owner thread alone holds the job table, starts and stops jobs, reads
// their logs and writes their records. Callers post commands to it and wait
// for the answer; readers get the latest snapshot of each record. No lock
// is held across a subprocess, an fsync or an open of a file a job can
// touch: only the queue and the snapshot have locks, held for a copy.
//
// A run's record is written and fsynced (state starting, with its run id)
// before anything of it runs. At start the agent reconciles: records whose
// run never launched are settled, tmux sessions no record claims are
// adopted as orphaned, and a stop a restart interrupted is finished.
#pragma once

#include <chrono>
#include <condition_variable>
#include <deque>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "agents/sys/cgroup_driver.h"
#include "agents/sys/clock.h"
#include "agents/sys/command_runner.h"
#include "agents/sys/gpu_types.h"
#include "agents/sys/process_control.h"
#include "agents/sys/tmux.h"
#include "agents/train/gpu_placement.h"
#include "agents/train/job_launcher.h"
#include "agents/train/job_record.h"
#include "agents/train/job_store.h"
#include "agents/train/log_ingest.h"

namespace gpuctl::train {

struct JobSupervisorOptions {
  std::string state_dir;
  // Where a Proxmox LXC container's root filesystem appears on the host
  // ({vmid} is replaced); job logs inside it are read from here.
  std::string lxc_rootfs_template = "/var/lib/lxc/{vmid}/rootfs";
  // Where jobs inside a container keep their files (a path inside it).
  std::string container_state_dir = "/var/lib/gpuctl";
  std::string pct = "pct";
  std::string tmux_socket = "gpuctl";  // the agent's tmux server, for hints
  // The working directory of a host job whose spec names none: a client on
  // another host (gpuctl --node) has no directory here to give. The agent
  // user's home, as `ssh host CMD` would use.
  std::string default_cwd = "/";
  // How often active jobs are checked and their logs read when nothing asks.
  std::chrono::milliseconds monitor_interval{250};
  // Memory cgroups for jobs: each host run gets PARENT/NAME@RUN with a
  // memory limit. Null: jobs run without a cgroup of their own.
  sys::CgroupDriver* cgroups = nullptr;
  std::string cgroup_parent = "/gpuctl";
  std::optional<uint64_t> default_mem_limit_bytes;
  // Job events for the agent's event stream (job_started, job_ended and
  // each event read from a log); fields carry the run_id. Called on the
  // owner thread: must not block or call back.
  std::function<void(std::string kind, std::string job, std::string message, nlohmann::json fields)> publish;
  // The GPUs with their processes (the health sampler's cached reading),
  // for each job's GPU memory; called on the owner thread at most every
  // gpu_memory_interval while jobs run. Null: no GPU memory per job.
  std::function<sys::GpuReport()> read_gpus;
  std::chrono::milliseconds gpu_memory_interval{1000};
  // The GPU queue: a GPU is busy when processes the agent did not start use
  // this much of it.
  uint64_t gpu_busy_below_bytes = uint64_t{1} << 30;
};

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

  // Loads the records, reconciles them with what runs (see above), and
  // starts the owner thread.
  void Start();
  // Stops the owner thread (jobs keep running) and wakes every call waiting
  // for a job's end (a stop in its grace answers with the job as it is).
  // Idempotent.
  void Shutdown();

  // Errors: kInvalidArgument for a bad spec, a missing or non-executable
  // script; kAlreadyExists when a job of that name may be running, or its
  // record is unreadable; kFailedPrecondition for a container that does not
  // exist or is stopped; filesystem errors when the record cannot be saved
  // (then nothing was started); tmux errors otherwise (the run's record then
  // says it failed to start). Ok means: running, and recorded.
  Result<JobRecord> StartJob(JobSpec spec);
  Result<JobRecord> GetJob(const std::string& name);
  std::vector<JobRecord> ListJobs();
  // SIGTERM to the job (its process group and its cgroup), SIGKILL once
  // `grace` has passed; the request and its deadline are saved first, so an
  // agent restarted meanwhile finishes the stop. Waits for the end, up to
  // `grace` plus 15 s.
  Result<JobRecord> StopJob(const std::string& name, std::chrono::milliseconds grace);
  // Deletes an ended or unreadable job's record and log. kFailedPrecondition
  // for a job that may still run.
  Result<JobRecord> RemoveJob(const std::string& name);
  Result<LogSource> GetLogSource(const std::string& name);

  // Running jobs, for the memory guard to weigh.
  std::vector<GuardedJob> RunningJobs();
  // Called by the guard just before it kills run `run_id`: when that run's
  // end is seen, its state becomes killed_by_guard with this reason. A later
  // run of the same name is not touched.
  void MarkKilledByGuard(const std::string& run_id, const std::string& reason);
  // Called by the build governor just before it kills run `run_id`, which
  // cannot fit its budget: when that run's end is seen, it is failed with
  // this reason.
  void MarkFailed(const std::string& run_id, const std::string& reason);

 private:
  struct Entry {
    JobRecord record;
    LogIngest ingest;
    int64_t last_save_ms = 0;
    uint64_t saved_offset = 0;
    bool kill_sent = false;  // a stop's SIGKILL went out
    std::set<uint32_t> gpu_pids;  // this run's processes seen on GPUs
    // The run before this one of the same name (an OOM relaunch, a rerun):
    // its GPU pids, told apart as its own for a while after it ended.
    std::set<uint32_t> previous_gpu_pids;
    int64_t previous_ended_unix_ms = 0;
    std::chrono::steady_clock::time_point recheck_at{};  // after it: when to look again
  };
  struct Call;

  // Runs `work` on the owner thread and waits until it ran. A call still
  // queued at `queue_deadline` is withdrawn: false, it never ran (a call
  // that began is always waited for, so a caller never answers "failed"
  // for a start that happened). False too while the agent stops.
  bool RunOnOwner(std::function<void()> work, std::chrono::milliseconds queue_deadline);
  // Blocks until `name`'s snapshot is no longer active or `deadline`.
  void WaitForEnd(const std::string& name, std::chrono::steady_clock::time_point deadline);

  // --- owner thread only ---
  void OwnerLoop();
  void Reconcile();
  void AdoptOrphans();
  // `lineage`: an OOM relaunch's earlier attempts and the step to pass.
  struct Lineage {
    std::vector<AttemptRecord> attempts;
    std::optional<uint64_t> hold_step;
  };
  // `admitted`: past the GPU queue (admitted from it, or an OOM relaunch on
  // its own GPUs); otherwise a job that asks for GPUs may be queued.
  Result<JobRecord> DoStart(JobSpec spec, Lineage lineage = {}, bool admitted = false);
  // The GPU queue (gpu_placement.h): the GPUs as the queue sees them, a new
  // job queued, and queued jobs admitted in order as GPUs free.
  std::vector<GpuSlot> GpuSlots(const sys::GpuReport& report);
  Result<JobRecord> Enqueue(JobSpec spec, Lineage lineage, std::string waiting_for, uint32_t restarts);
  // Rate-limited: a pass at most every kAdmitInterval (GPU readings may be
  // an nvidia-smi run, on this thread).
  void AdmitQueued();
  std::chrono::steady_clock::time_point next_admission_{};
  static constexpr std::chrono::milliseconds kAdmitInterval{200};
  // A queued job whose start failed at its turn: failed, with the reason.
  void FailQueued(const std::string& name, const std::string& why);
  // Jobs with --on-oom recover whose run ended in CUDA OOM (its log read to
  // the end): decided on (oom_remediation.h), relaunched or given up.
  void RemediateOoms();
  // Each running job's GPU memory (job_gpu_memory.h) and gpu_memory_high.
  void SampleGpuMemory();
  // Whose a GPU process is (job_supervisor_gpu.cc): a snapshot of the jobs'
  // groups, cgroups and recent runs' pids, asked per pid.
  std::function<std::optional<GpuProcessOwner>(uint32_t)> GpuOwners();
  std::chrono::steady_clock::time_point next_gpu_sample_{};
  void Remediate(Entry& entry);
  Result<JobRecord> DoBeginStop(const std::string& name, std::chrono::milliseconds grace);
  Result<JobRecord> DoRemove(const std::string& name);
  // Unreadable records (job_supervisor_unreadable.cc): what of the job still
  // runs, found by its session and cgroups; its stop, kept in memory.
  void FindUnreadableRun(Entry& entry);
  bool UnreadableStillRuns(const JobRecord& record);
  Result<JobRecord> BeginStopUnreadable(Entry& entry, std::chrono::milliseconds grace);
  void RefreshUnreadable(Entry& entry);
  // Reads up to `ingest_bytes` of the log, settles an ended run, escalates
  // a stop past its deadline; saves and publishes what changed.
  void Refresh(Entry& entry, size_t ingest_bytes);
  bool SettleIfEnded(Entry& entry);
  // A run recorded as starting whose session (with its run id) exists:
  // recorded as running with the session's pane. False when not found.
  bool AdoptLaunched(Entry& entry);
  bool ProcessesRemain(const JobRecord& record);
  bool InnerAlive(const JobRecord& record);
  // A container job: reads the pid its wrapper wrote inside and finds that
  // process on the host (until found).
  void FindInnerProcess(Entry& entry);
  void SignalJob(const JobRecord& record, int sig);
  Status Save(Entry& entry);
  void Publish(const Entry& entry);
  void Unpublish(const std::string& name);
  void UpdateGuarded();
  void PublishEvent(const std::string& kind, const JobRecord& record, const std::string& message,
                    nlohmann::json fields);
  Entry& Put(JobRecord record);
  int64_t NowMs() const;
  std::chrono::steady_clock::time_point NextWake(std::chrono::steady_clock::time_point now);
  void Tick();
  std::chrono::steady_clock::time_point next_tick_{};
  bool backlog_ = false;

  JobSupervisorOptions options_;
  JobStore store_;
  sys::Tmux& tmux_;
  sys::ProcessControl& processes_;
  const sys::Clock& clock_;
  JobLauncher launcher_;

  std::map<std::string, std::unique_ptr<Entry>> entries_;  // the owner thread's alone

  std::mutex queue_mutex_;
  std::condition_variable queue_wake_;
  std::deque<std::shared_ptr<Call>> queue_;
  bool stopping_ = false;
  bool owner_running_ = false;
  std::thread owner_;

  std::mutex snapshot_mutex_;
  std::condition_variable snapshot_changed_;
  std::map<std::string, std::shared_ptr<const JobRecord>> snapshot_;
  bool shutting_down_ = false;  // snapshot_mutex_: waits for a job's end return
  std::shared_ptr<const JobRecord> Snapshot(const std::string& name);
  // When a follower last had the owner check a job's end: many followers of
  // one job share one check per kEndCheckInterval.
  std::map<std::string, std::chrono::steady_clock::time_point> end_checked_at_;  // snapshot_mutex_
  bool EndCheckDue(const std::string& name);

  // The guard's view, behind a lock of its own: the guard never waits for
  // the owner between its line and its kill.
  std::mutex guard_mutex_;
  std::vector<GuardedJob> guarded_;
  std::map<std::string, std::string> guard_kills_;  // run id -> reason
  std::map<std::string, std::string> failures_;     // run id -> reason
};

}  // namespace gpuctl::train
