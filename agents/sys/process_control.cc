// kill(2) for signals and liveness, /proc/PID/stat (through HostFs) for what
// kill cannot tell: zombies, start times, process groups.
#include "agents/sys/process_control.h"

#include <signal.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/types.h>
#include <unistd.h>

#include <cerrno>
#include <charconv>
#include <cstring>
#include <filesystem>
#include <limits>
#include <string>
#include <system_error>
#include <vector>

#include "agents/sys/host_fs.h"
#include "agents/sys/proc_parsers.h"
#include "agents/sys/proc_stat.h"
#include "agents/sys/proc_status.h"
#include "agents/sys/proc_tree.h"

namespace gpuctl::sys {
namespace {

// process_mrelease(2): 448 on every architecture (the unified syscall table).
#ifdef SYS_process_mrelease
constexpr long kSysProcessMrelease = SYS_process_mrelease;
#else
constexpr long kSysProcessMrelease = 448;
#endif
constexpr int kKcmpVm = 1;  // KCMP_VM of <linux/kcmp.h>

// pid 0 and negative pids mean "my group" or "every process" to kill(2); a
// value beyond pid_t would be truncated into some other pid. Neither may ever
// reach kill from a stale or corrupt record.
bool ValidPid(int64_t pid) { return pid > 0 && pid <= std::numeric_limits<pid_t>::max(); }

// kill(-1) signals every process we may signal, and group 1 is init's: a
// corrupt record naming either must not take the host down.
bool ValidGroup(int64_t pgid) { return pgid > 1 && pgid <= std::numeric_limits<pid_t>::max(); }

// kill(target, 0): true when something is there, including processes of
// other users (EPERM) that we may not signal but that are alive.
bool Exists(pid_t target) { return ::kill(target, 0) == 0 || errno == EPERM; }

class KillProcessControl : public ProcessControl {
 public:
  explicit KillProcessControl(const HostFs& fs) : fs_(fs) {}

  bool Alive(int64_t pid) override {
    if (!ValidPid(pid) || !Exists(static_cast<pid_t>(pid))) return false;
    // kill succeeds on a zombie; only /proc tells it apart. Without a
    // readable stat (no /proc, or the process just went) trust kill.
    auto stat = ReadStat(pid);
    return !stat.ok() || !stat->exited();
  }

  bool GroupAlive(int64_t pgid) override {
    if (!ValidGroup(pgid) || !Exists(static_cast<pid_t>(-pgid))) return false;
    if (Alive(pgid)) return true;  // the leader: the usual case, one read
    return SomeMemberRunning(pgid);
  }

  std::optional<uint64_t> StartTime(int64_t pid) override {
    if (!ValidPid(pid)) return std::nullopt;
    auto stat = ReadStat(pid);
    if (!stat.ok()) return std::nullopt;
    return stat->start_time_ticks;
  }

  std::optional<int64_t> ProcessGroup(int64_t pid) override {
    if (!ValidPid(pid)) return std::nullopt;
    auto stat = ReadStat(pid);
    if (!stat.ok()) return std::nullopt;
    return stat->pgrp;
  }

  std::optional<std::string> MemoryCgroup(int64_t pid) override {
    if (!ValidPid(pid)) return std::nullopt;
    auto text = fs_.ReadFile("proc/" + std::to_string(pid) + "/cgroup");
    if (!text.ok()) return std::nullopt;
    Result<std::vector<CgroupEntry>> entries = ParseProcCgroup(*text);
    if (!entries.ok()) return std::nullopt;
    std::optional<std::string> unified;
    for (const CgroupEntry& e : *entries) {
      for (const std::string& controller : e.controllers) {
        if (controller == "memory") return e.path;
      }
      if (e.hierarchy_id == 0 && e.controllers.empty()) unified = e.path;
    }
    return unified;
  }

  std::optional<int64_t> HostPidInContainer(const std::string& container_root, int64_t inner_pid) override {
    if (!ValidPid(inner_pid)) return std::nullopt;
    struct stat root {};
    if (::stat(container_root.c_str(), &root) != 0) return std::nullopt;
    Result<std::vector<int64_t>> pids = ListPids(fs_);
    if (!pids.ok()) return std::nullopt;
    for (int64_t pid : *pids) {
      const std::string dir = "proc/" + std::to_string(pid);
      auto status = fs_.ReadFile(dir + "/status");
      if (!status.ok()) continue;
      std::vector<int64_t> ids = ParseNsPids(*status);
      if (ids.size() < 2 || ids.back() != inner_pid) continue;
      // Same number, other containers: the root tells them apart.
      struct stat seen {};
      if (::stat(fs_.Path(dir + "/root").c_str(), &seen) != 0) continue;
      if (seen.st_dev == root.st_dev && seen.st_ino == root.st_ino) return pid;
    }
    return std::nullopt;
  }

  Status Signal(int64_t pid, int sig) override {
    if (!ValidPid(pid)) return InvalidArgument("refusing to signal pid " + std::to_string(pid));
    return Kill(static_cast<pid_t>(pid), sig, "process " + std::to_string(pid));
  }

  Status ReleaseMemory(int64_t pid) override {
    if (!ValidPid(pid)) return InvalidArgument("refusing to release the memory of pid " + std::to_string(pid));
    int pidfd = static_cast<int>(::syscall(SYS_pidfd_open, static_cast<pid_t>(pid), 0));
    if (pidfd < 0) return Status::Ok();  // gone already
    long released = ::syscall(kSysProcessMrelease, pidfd, 0);
    int err = errno;
    ::close(pidfd);
    // EINVAL: not dying (or its memory is shared with a live process);
    // ESRCH: gone; ENOSYS: an older kernel. The exit frees it in each case.
    if (released == 0 || err == EINVAL || err == ESRCH || err == ENOSYS) return Status::Ok();
    return IoError("process_mrelease(" + std::to_string(pid) + "): " + std::strerror(err));
  }

  std::optional<bool> SameAddressSpace(int64_t a, int64_t b) override {
    if (fs_.root() != "/" || !ValidPid(a) || !ValidPid(b)) return std::nullopt;
    long same = ::syscall(SYS_kcmp, static_cast<pid_t>(a), static_cast<pid_t>(b), kKcmpVm, 0, 0);
    if (same < 0) return std::nullopt;  // ENOSYS, EPERM, ESRCH
    return same == 0;                   // 1 and 2 order two different ones
  }

  Status SignalGroup(int64_t pgid, int sig) override {
    if (!ValidGroup(pgid)) {
      return InvalidArgument("refusing to signal process group " + std::to_string(pgid));
    }
    return Kill(static_cast<pid_t>(-pgid), sig, "process group " + std::to_string(pgid));
  }

 private:
  Result<ProcStat> ReadStat(int64_t pid) const {
    auto text = fs_.ReadFile("proc/" + std::to_string(pid) + "/stat");
    if (!text.ok()) return text.status();
    return ParseProcStat(*text);
  }

  static Status Kill(pid_t target, int sig, const std::string& what) {
    if (::kill(target, sig) == 0 || errno == ESRCH) return Status::Ok();
    return ErrnoError("sending signal " + std::to_string(sig) + " to " + what, errno);
  }

  // The leader is gone or a zombie, yet kill found the group: look for a
  // member that still runs. Returns true unless members were seen and every
  // one had exited; processes hidden from us (hidepid, another namespace)
  // cannot be told apart and so count as alive, as the header promises.
  bool SomeMemberRunning(int64_t pgid) const {
    std::error_code ec;
    std::filesystem::directory_iterator it(fs_.Path("proc"), ec);
    if (ec) return true;
    bool saw_member = false;
    for (; it != std::filesystem::directory_iterator(); it.increment(ec)) {
      if (ec) return true;
      const std::string name = it->path().filename().string();
      int64_t pid = 0;
      auto [end, err] = std::from_chars(name.data(), name.data() + name.size(), pid);
      if (err != std::errc() || end != name.data() + name.size() || !ValidPid(pid)) continue;
      auto stat = ReadStat(pid);
      if (!stat.ok() || stat->pgrp != pgid) continue;
      if (!stat->exited()) return true;
      saw_member = true;
    }
    return !saw_member;
  }

  const HostFs& fs_;
};

}  // namespace

std::unique_ptr<ProcessControl> MakeProcessControl(const HostFs& fs) {
  return std::make_unique<KillProcessControl>(fs);
}

}  // namespace gpuctl::sys
