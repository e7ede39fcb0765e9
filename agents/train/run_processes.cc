#include "agents/train/run_processes.h"

#include <signal.h>

#include <set>

#include <spdlog/spdlog.h>

#include "agents/train/container_build_gate.h"
#include "agents/train/pid_file.h"

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
  int64_t written = 0;
  std::optional<int64_t> host = HostPidFromPidFile(processes_, r.pid_path, &written);
  if (!host) return false;  // not written yet, or gone already, or not yet visible: the exit status will say
  r.inner_pid = *host;
  r.inner_start_time = processes_.StartTime(*host);
  // setsid made it lead its own group; without setsid(1) it shares the
  // wrapper's, which only the pid reaches.
  r.inner_pgid = processes_.ProcessGroup(*host) == *host ? *host : 0;
  if (r.spec.container.empty()) {
    spdlog::info("job '{}' (run {}): its command is pid {}, in a session of its own", r.spec.name, r.run_id, *host);
  } else {
    spdlog::info("job '{}' (run {}): its command is pid {} inside container {}, {} here", r.spec.name, r.run_id,
                 written, r.spec.container, *host);
  }
  return true;
}

bool RunProcesses::PlaceContainerBuild(JobRecord& r) {
  return cgroups_ != nullptr && OpenContainerBuildGate(r, processes_, *cgroups_);
}

void RunProcesses::Signal(const JobRecord& r, int sig) {
  // Each process once: many trainers take a second SIGTERM as "exit now,
  // skip the checkpoint". The command's own group first (its pid file may be
  // newer than the record); the wrapper passes a signal on to that group, so
  // it is left out once the group is known, but for SIGKILL, which it cannot
  // pass on; then whatever of the cgroup is in neither group (setsid, a
  // daemonized child).
  int64_t inner_pid = 0, inner_pgid = r.inner_pgid;
  if (r.inner_pid > 0 && processes_.StartTime(r.inner_pid) == r.inner_start_time) inner_pid = r.inner_pid;
  if (inner_pid == 0 && inner_pgid == 0 && !r.pid_path.empty()) {
    if (std::optional<int64_t> host = HostPidFromPidFile(processes_, r.pid_path)) {
      inner_pid = *host;
      if (processes_.ProcessGroup(*host) == *host) inner_pgid = *host;
    }
  }
  const bool inner_known = inner_pid > 0 || inner_pgid > 0;
  std::set<int64_t> groups;
  if (inner_pgid > 0) {
    if (Status s = processes_.SignalGroup(inner_pgid, sig); !s.ok()) spdlog::warn("job '{}': {}", r.spec.name, s.message());
    groups.insert(inner_pgid);
  } else if (inner_pid > 0) {
    (void)processes_.Signal(inner_pid, sig);
  }
  const bool to_wrapper = !inner_known || sig == SIGKILL;
  if (r.pgid > 0 && to_wrapper) {
    if (Status s = processes_.SignalGroup(r.pgid, sig); !s.ok()) spdlog::warn("job '{}': {}", r.spec.name, s.message());
    groups.insert(r.pgid);
  }
  // A command not yet known (it is being started) gets the signal from the
  // wrapper: the cgroup's members are left to it, or they would get two.
  const bool command_starting = !inner_known && !r.pid_path.empty() && sig != SIGKILL;
  if (!r.cgroup.empty() && cgroups_ && !command_starting) {
    Result<std::vector<int64_t>> procs = cgroups_->Processes(r.cgroup);
    if (procs.ok()) {
      for (int64_t pid : *procs) {
        if (pid == inner_pid || (pid == r.pid && !to_wrapper)) continue;
        std::optional<int64_t> group = processes_.ProcessGroup(pid);
        if (group && groups.count(*group) > 0) continue;  // signalled with its group
        (void)processes_.Signal(pid, sig);
      }
    }
  }
  if (sig == SIGTERM) Signal(r, SIGCONT);
}

}  // namespace gpuctl::train
