// Where and how a job runs: on the host or in a Proxmox LXC container (pct),
// in a memory cgroup of its own, in a tmux session. Planning checks
// everything a user can get wrong and has no effect; preparing creates the
// job's files and cgroup; launching starts the tmux session. The job
// supervisor saves the run's record between planning and preparing.
#pragma once

#include <cstdint>
#include <optional>
#include <string>

#include "agents/sys/cgroup_driver.h"
#include "agents/sys/command_runner.h"
#include "agents/sys/process_control.h"
#include "agents/sys/tmux.h"
#include "agents/train/job_environment.h"
#include "agents/train/job_spec.h"
#include "agents/train/job_store.h"
#include "agents/train/launch_command.h"
#include "common/status.h"

namespace gpuctl::train {

struct JobLauncherOptions {
  std::string lxc_rootfs_template = "/var/lib/lxc/{vmid}/rootfs";
  std::string container_state_dir = "/var/lib/gpuctl";
  std::string pct = "pct";
  sys::CgroupDriver* cgroups = nullptr;  // null: jobs run without a cgroup of their own
  std::string cgroup_parent = "/gpuctl";
  std::optional<uint64_t> default_mem_limit_bytes;
  std::string tmux_socket = "gpuctl";  // for the hints printed to users
  // The environment jobs start from (job_environment.h); unset: the agent's
  // own, read when the launcher is made.
  std::optional<EnvMap> agent_env;
};

// A run's place, decided before anything happens.
struct Placement {
  LaunchPaths inside;     // as the job sees them (inside the container for LXC)
  std::string log_path;   // as the agent reads them, on the host
  std::string exit_path;
  std::string cgroup;     // PARENT/NAME@RUN, or empty
  std::string pid_path;   // the command's pid (as the container numbers it, for a container job)
  std::string cgroup_gate;  // container builds: where the agent answers the wrapper (container_build_gate.h)
  JobEnvironment env;       // what the job's environment will be (job_environment.h)
  std::vector<std::string> run_command;  // the argv it will run (EffectiveCommand)
};

struct Pane {
  int64_t pid = 0;  // the wrapper: tmux's pane process, leader of its own group
  std::optional<uint64_t> start_time;
};

// What of a job runs, found without its record (one that cannot be read):
// its tmux session with the run id in its environment, and its cgroups.
struct LiveRun {
  std::string session;              // empty: none
  std::string run_id;               // from the session; empty when unknown
  std::optional<Pane> pane;
  std::vector<std::string> cgroups;  // PARENT/NAME@RUN that exist
};

class JobLauncher {
 public:
  JobLauncher(JobLauncherOptions options, const JobStore& store, sys::Tmux& tmux, sys::ProcessControl& processes,
              sys::CommandRunner& runner);

  // Errors: kInvalidArgument (missing or non-executable script, cwd that is
  // not a directory, a host job's command not found on its PATH), kFailedPrecondition (a container that is stopped or
  // unknown, no pct), kAlreadyExists (a tmux session of that name runs).
  Result<Placement> Plan(const JobSpec& spec, const std::string& run_id);
  // Looks for what runs of job `name` by its names alone: the session
  // gpuctl-NAME and the cgroups PARENT/NAME@*. Host jobs only (a container
  // job's cgroup is the container's).
  LiveRun FindLiveRun(const std::string& name);
  // kInvalidArgument when the job's command line (its argv, environment and
  // the wrapper) is more than tmux can pass to its server.
  Status CheckTmuxCanCarry(const JobSpec& spec, const Placement& placement, const std::string& run_id) const;
  // The job's directory, the last run's log kept as output.log.prev, a fresh
  // empty log, no exit status, the cgroup with its limit.
  Status Prepare(const JobSpec& spec, const Placement& placement, bool rerun);
  // Starts the tmux session; GPUCTL_RUN_ID is in its environment and the job's.
  Status Launch(const JobSpec& spec, const Placement& placement, const std::string& run_id);
  // The session's pane, once tmux reports it. kNotFound when the job already
  // ended (its exit file then says how).
  Result<Pane> FindPane(const std::string& session);

  std::string HostPathForContainer(const std::string& vmid, const std::string& inside) const;
  // Where a container job runs when no --cwd was given.
  std::string DefaultContainerCwd(const std::string& vmid) const;

 private:
  Status CheckContainerRunning(const std::string& vmid);

  JobLauncherOptions options_;
  const JobStore& store_;
  sys::Tmux& tmux_;
  sys::ProcessControl& processes_;
  sys::CommandRunner& runner_;
  EnvMap agent_env_;
};

}  // namespace gpuctl::train
