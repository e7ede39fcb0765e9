// Starts, watches, stops and re-adopts training jobs. Jobs never depend on
// the agent: they live in tmux, write their own log and exit status, and a
// restarted agent picks them up from their records.
//
// A facade that wires the job core together: the job table (job_table.h),
// the one place job state lives; the owner loop (job_owner_loop.h), the one
// thread that writes it, running the calls posted here and the parts
// registered with it, each a narrow piece over the table: reconciliation at
// start, the run monitor, stop escalation, OOM relaunch, GPU memory
// sampling, the GPU queue. Callers post commands (job_commands.h) and wait
// for the answer; readers get the latest snapshot of each record. No lock
// is held across a subprocess, an fsync or an open of a file a job can
// touch: only the loop's queue, the snapshot and the guard's view have
// locks, held for a copy.
//
// A run's record is written and fsynced (state starting, with its run id)
// before anything of it runs. At start the agent reconciles: records whose
// run never launched are settled, tmux sessions no record claims are
// adopted as orphaned, and a stop a restart interrupted is finished.
#pragma once

#include <chrono>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "agents/sys/cgroup_driver.h"
#include "agents/sys/clock.h"
#include "agents/sys/command_runner.h"
#include "agents/sys/gpu_types.h"
#include "agents/sys/process_control.h"
#include "agents/sys/tmux.h"
#include "agents/sys/host_fs.h"
#include "agents/train/checkpoint_relaunch.h"
#include "agents/train/gpu_memory_sampler.h"
#include "agents/train/gpu_queue.h"
#include "agents/train/guard_view.h"
#include "agents/train/hang_watch.h"
#include "agents/train/job_commands.h"
#include "agents/train/job_launcher.h"
#include "agents/train/job_owner_loop.h"
#include "agents/train/job_part.h"
#include "agents/train/job_record.h"
#include "agents/train/job_store.h"
#include "agents/train/job_table.h"
#include "agents/train/oom_relaunch.h"
#include "agents/train/reconciliation.h"
#include "agents/train/run_monitor.h"
#include "agents/train/run_processes.h"
#include "agents/train/run_sampler.h"
#include "agents/train/stack_dump.h"
#include "agents/train/stop_escalation.h"
#include "agents/train/unreadable_runs.h"

namespace gpuctl::train {

struct JobSupervisorOptions {
  std::string state_dir;
  // The environment jobs start from (job_environment.h); unset: the agent's.
  std::optional<std::map<std::string, std::string>> agent_env;
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
  // Hang detection: where /proc is read (a fixture root in tests), the PATH
  // py-spy is looked for on after the job's venv, and its timing.
  std::string host_root = "/";
  std::string agent_path;
  HangWatchOptions hang;
  // Tests replace how a run's processes are read and dumped; null: /proc
  // and py-spy.
  RunSampler* sampler = nullptr;
  StackDumper* dumper = nullptr;
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
  // The tmux server (tmux -L NAME) the jobs' sessions live in.
  const std::string& tmux_socket() const { return options_.tmux_socket; }
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
  // only_run: when not empty, only that run is removed (a job started again
  // meanwhile is refused).
  Result<JobRecord> RemoveJob(const std::string& name, const std::string& only_run = "");
  Result<LogSource> GetLogSource(const std::string& name);
  // A dump of a running job's stacks now (hang_watch.h's bundle), written
  // by the calling thread. kFailedPrecondition for a job not running.
  Result<StackDump> DumpJob(const std::string& name);
  // GPU `index` (`uuid`) faulted and was drained: every active run on it
  // (given it, or seen on it) is stopped, ended failed with `reason`, and
  // relaunched on healthy GPUs under --on-gpu-fault recover. Returns the
  // jobs stopped.
  std::vector<std::string> GpuFaulted(uint32_t index, const std::string& uuid, const std::string& reason);

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
  JobSupervisorOptions options_;
  JobStore store_;
  JobLauncher launcher_;
  JobTable table_;
  GuardView guard_;
  RunProcesses processes_;
  UnreadableRuns unreadable_;
  // The parts, in their order on each pass of the loop (and of refresh
  // hooks): reconciliation (at start), the monitor, stop escalation, OOM
  // relaunch, hang detection, checkpoint relaunch, GPU memory, the queue.
  sys::HostFs host_fs_;
  ProcRunSampler proc_sampler_;
  ProcStackDumper proc_dumper_;
  RunSampler& sampler_;
  StackDumper& dumper_;
  JobParts parts_;
  RunMonitor monitor_;
  StopEscalation stops_;
  // The queue and OOM relaunch start runs through commands_, declared after
  // them: bound here, used only once the loop runs.
  GpuQueue queue_;
  OomRelaunch ooms_;
  HangWatch hangs_;
  CheckpointRelaunch relaunches_;
  GpuMemorySampler gpu_memory_;
  Reconciliation reconciliation_;
  JobCommands commands_;
  JobOwnerLoop loop_;
};

}  // namespace gpuctl::train
