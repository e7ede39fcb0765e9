#include "agents/train/run_processes.h"

#include <signal.h>

#include <spdlog/spdlog.h>

#include "agents/train/container_build_gate.h"

namespace gpuctl::train {

RunProcesses::RunProcesses(sys::ProcessControl& processes, sys::CgroupDriver* cgroups)
    : processes_(processes), cgroups_(cgroups) {}

bool RunProcesses::Remain(const JobRecord& r) {
  if (!r.cgroup.empty() && cgroups_) {
    Result<std::vector<int64_t>> procs = cgroups_->Processes(r.cgroup);
    if (procs.ok() && !procs->empty()) return true;
  }
  if (InnerAlive(r)) return true;
  if (r.pid > 0 && processes_.Alive(r.pid)) {
    if (!r.pid_start_time || processes_.StartTime(r.pid) == r.pid_start_time) return true;
    // The pid is another process's now. A pid is never handed out while a
    // group of that number has members, so our group is gone too; a group
    // of that number is the new process's.
    return false;
  }
  return r.pgid > 0 && processes_.GroupAlive(r.pgid);
}

bool RunProcesses::InnerAlive(const JobRecord& r) {
  if (r.inner_pid > 0 && processes_.Alive(r.inner_pid) &&
      (!r.inner_start_time || processes_.StartTime(r.inner_pid) == r.inner_start_time)) {
    return true;
  }
  return r.inner_pgid > 0 && processes_.GroupAlive(r.inner_pgid);
}

bool RunProcesses::FindInner(JobRecord& r) {
  if (r.pid_path.empty() || r.inner_pid > 0 || !IsActive(r.state)) return false;
  int64_t inner = 0;
  std::optional<int64_t> host = HostPidFromContainerFile(processes_, r.pid_path, &inner);
  if (!host) return false;  // not written yet, or gone already, or not yet visible: the exit status will say
  r.inner_pid = *host;
  r.inner_start_time = processes_.StartTime(*host);
  // setsid made it lead its own group; without setsid(1) in the container
  // it shares the wrapper's, which only the pid reaches.
  r.inner_pgid = processes_.ProcessGroup(*host) == *host ? *host : 0;
  spdlog::info("job '{}' (run {}): its command is pid {} inside container {}, {} here", r.spec.name, r.run_id,
               inner, r.spec.container, *host);
  return true;
}

bool RunProcesses::PlaceContainerBuild(JobRecord& r) {
  return cgroups_ != nullptr && OpenContainerBuildGate(r, processes_, *cgroups_);
}

void RunProcesses::Signal(const JobRecord& r, int sig) {
  if (r.inner_pgid > 0) {
    if (Status s = processes_.SignalGroup(r.inner_pgid, sig); !s.ok()) {
      spdlog::warn("job '{}': {}", r.spec.name, s.message());
    }
  } else if (r.inner_pid > 0 && processes_.StartTime(r.inner_pid) == r.inner_start_time) {
    (void)processes_.Signal(r.inner_pid, sig);
  }
  if (r.pgid > 0) {
    if (Status s = processes_.SignalGroup(r.pgid, sig); !s.ok()) spdlog::warn("job '{}': {}", r.spec.name, s.message());
  }
  if (!r.cgroup.empty() && cgroups_) {
    // Whatever left the process group (setsid, a daemonized child) is still
    // in the cgroup.
    Result<std::vector<int64_t>> procs = cgroups_->Processes(r.cgroup);
    if (procs.ok()) {
      for (int64_t pid : *procs) (void)processes_.Signal(pid, sig);
    }
  }
  if (sig == SIGTERM) Signal(r, SIGCONT);
}

}  // namespace gpuctl::train
