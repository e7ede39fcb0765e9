#include "agents/sys/self_protection.h"

#include <fcntl.h>
#include <malloc.h>
#include <sys/mman.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <cstring>
#include <string>

#ifndef MCL_ONFAULT
#define MCL_ONFAULT 4
#endif

namespace gpuctl::sys {

int64_t SelfPid() { return static_cast<int64_t>(::getpid()); }

void WarmStack(size_t bytes) {
  // A fixed buffer per frame, touched a page at a time, recursing for more.
  constexpr size_t kChunk = 16 * 1024;
  volatile char buffer[kChunk];
  unsigned sum = 0;
  for (size_t i = 0; i < kChunk; i += 4096) {
    buffer[i] = static_cast<char>(i);
    sum += static_cast<unsigned char>(buffer[i]);
  }
  if (bytes > kChunk && sum != 1) WarmStack(bytes - kChunk);
}

namespace {
std::atomic<bool> memory_locked{false};
}  // namespace

Status LockAllMemory() {
  if (::mlockall(MCL_CURRENT | MCL_FUTURE | MCL_ONFAULT) != 0) {
    return ErrnoError("mlockall (the agent's memory is not locked; run as root or raise LimitMEMLOCK)", errno);
  }
  memory_locked = true;
  return Status::Ok();
}

void ReturnFreedMemory() {
  // madvise(MADV_DONTNEED), which malloc_trim uses, refuses locked pages: a
  // locked agent unlocks for the trim and locks again (MCL_ONFAULT: only the
  // pages still in use come back locked).
  const bool locked = memory_locked.load();
  if (locked) ::munlockall();
  ::malloc_trim(0);
  if (locked && ::mlockall(MCL_CURRENT | MCL_FUTURE | MCL_ONFAULT) != 0) memory_locked = false;
}

Status SetOomScoreAdj(const HostFs& fs, int64_t pid, int adj) {
  std::string path = fs.Path("proc/" + std::to_string(pid) + "/oom_score_adj");
  int fd = ::open(path.c_str(), O_WRONLY | O_CLOEXEC);
  if (fd < 0) return ErrnoError("cannot open " + path, errno);
  std::string value = std::to_string(adj);
  ssize_t n = ::write(fd, value.data(), value.size());
  int err = errno;
  ::close(fd);
  if (n < 0) return ErrnoError("cannot write " + path, err);
  return Status::Ok();
}

Status ProtectAgentFromOomKiller(const HostFs& fs, int64_t agent_pid) {
  Status s = SetOomScoreAdj(fs, agent_pid, -1000);
  if (s.ok()) return s;
  return Status(s.code(), "gpuctld cannot protect its own process (pid " + std::to_string(agent_pid) +
                              ") from the kernel's OOM killer: " + s.message() +
                              ". Under memory pressure the kernel may kill the agent itself, and with it the memory "
                              "guard that would have stopped a job first (jobs keep running); run gpuctld as root "
                              "or with CAP_SYS_RESOURCE");
}

}  // namespace gpuctl::sys
