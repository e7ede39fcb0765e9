// The seam for looking at and signalling processes (kill, /proc/PID/stat).
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>

#include "common/status.h"

namespace gpuctl::sys {

class HostFs;

class ProcessControl {
 public:
  virtual ~ProcessControl() = default;
  // True while `pid` exists and is not a zombie.
  virtual bool Alive(int64_t pid) = 0;
  // True while any process of group `pgid` exists (zombies excepted where
  // they can be told apart).
  virtual bool GroupAlive(int64_t pgid) = 0;
  // Start time in clock ticks since boot (field 22 of /proc/PID/stat): with
  // the pid it names a process for good, since pids are reused.
  virtual std::optional<uint64_t> StartTime(int64_t pid) = 0;
  // The process group of `pid` (field 5 of /proc/PID/stat).
  virtual std::optional<int64_t> ProcessGroup(int64_t pid) = 0;
  // The memory cgroup of `pid` as /proc/PID/cgroup names it ("/gpuctl/a@r"):
  // the v1 memory hierarchy's entry, else v2's unified one. A process that
  // left its job's process group (setsid) is still in its job's cgroup.
  virtual std::optional<std::string> MemoryCgroup(int64_t pid) = 0;
  // The host's pid of the process numbered `inner_pid` inside the container
  // whose root filesystem is `container_root`: the process whose NSpid
  // (/proc/PID/status) ends in inner_pid in a pid namespace below ours and
  // whose root directory is that root. nullopt when there is none.
  virtual std::optional<int64_t> HostPidInContainer(const std::string& container_root, int64_t inner_pid) = 0;
  // kill(pid, sig). A process already gone is not an error.
  virtual Status Signal(int64_t pid, int sig) = 0;
  // kill(-pgid, sig). A group already gone is not an error.
  virtual Status SignalGroup(int64_t pgid, int sig) = 0;
  // After SIGKILL: unmaps the dying `pid`'s memory now, in the caller
  // (process_mrelease(2), Linux 5.15+), alongside its own exit, which alone
  // takes tens of ms per GiB on a busy host. Only a dying process is touched,
  // so a pid reused since the kill is safe. Gone, not dying, or a kernel
  // without the call: nothing done, not an error (the exit frees it anyway).
  virtual Status ReleaseMemory(int64_t /*pid*/) { return Status::Ok(); }
  // Whether two processes share one address space (kcmp(2) KCMP_VM): a
  // child cloned with CLONE_VM but not as a thread, such as LeakSanitizer's
  // tracer or a vfork/posix_spawn child before its exec. nullopt when it
  // cannot be known (no kcmp, no permission, a pid gone, or a HostFs rooted
  // at a fixture tree, whose pids are not this host's).
  virtual std::optional<bool> SameAddressSpace(int64_t /*a*/, int64_t /*b*/) { return std::nullopt; }
};

std::unique_ptr<ProcessControl> MakeProcessControl(const HostFs& fs);

}  // namespace gpuctl::sys
