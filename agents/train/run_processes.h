// A run's processes as the host has them: whether any remain (its cgroup's,
// its wrapper, its process group, a container job's command inside), and
// signals to all of them. No state of its own: it asks each time.
#pragma once

#include <cstdint>

#include "agents/sys/cgroup_driver.h"
#include "agents/sys/process_control.h"
#include "agents/train/job_record.h"

namespace gpuctl::train {

class RunProcesses {
 public:
  // `cgroups` null: jobs have no cgroup of their own.
  RunProcesses(sys::ProcessControl& processes, sys::CgroupDriver* cgroups);

  // A job runs while anything of it runs: its cgroup's processes, a
  // container job's command, its wrapper (the same process: its start time
  // tells a re-used pid apart), or what it left in its process group.
  bool Remain(const JobRecord& record);
  // A signal to every process of the run, each once: the command's own
  // group (its session; signals to the host side of a container job stop at
  // pct exec), the wrapper's group only while the command is not known yet
  // (the wrapper passes it on) or for SIGKILL, then whatever of the cgroup
  // is in neither. A SIGTERM is followed by SIGCONT: a stopped process (a
  // compile the build governor paused) takes no SIGTERM before.
  void Signal(const JobRecord& record, int sig);
  // The host pid of the command its wrapper started in a session of its own
  // (the pid it wrote to pid_path; as the container numbers it, for a
  // container job). True when found now, and set in the record.
  bool FindInner(JobRecord& record);
  // A container build waiting at its gate: placed in its cgroup and let go
  // (OpenContainerBuildGate). True when the record changed.
  bool PlaceContainerBuild(JobRecord& record);

  sys::ProcessControl& control() { return processes_; }
  sys::CgroupDriver* cgroups() { return cgroups_; }

 private:
  bool InnerAlive(const JobRecord& record);

  sys::ProcessControl& processes_;
  sys::CgroupDriver* cgroups_;
};

}  // namespace gpuctl::train
