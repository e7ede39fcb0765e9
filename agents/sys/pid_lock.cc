#include "agents/sys/pid_lock.h"

#include <fcntl.h>
#include <signal.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstdlib>
#include <string>
#include <thread>

namespace gpuctl::sys {
namespace {

// Whether the pid written in the lock file names no process now.
bool HolderIsGone(const std::string& holder) {
  char* end = nullptr;
  const long pid = std::strtol(holder.c_str(), &end, 10);
  if (end == holder.c_str() || *end != '\0' || pid <= 0) return false;
  return ::kill(static_cast<pid_t>(pid), 0) != 0 && errno == ESRCH;
}

}  // namespace

Result<PidLock> PidLock::Acquire(const std::string& path) {
  // O_NOFOLLOW: a symlink planted as the lock file is refused, never
  // followed to a file we would then truncate and write our pid into.
  int fd = ::open(path.c_str(), O_RDWR | O_CREAT | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC, 0600);
  if (fd < 0) {
    int err = errno;
    if (err == ELOOP) {
      return Status(ErrorCode::kPermissionDenied, "lock file " + path + " is a symbolic link; remove it");
    }
    return ErrnoError("cannot open lock file " + path, err);
  }
  // A hard link or a FIFO planted there is no better than a symlink.
  struct stat st {};
  if (::fstat(fd, &st) != 0 || !S_ISREG(st.st_mode) || st.st_nlink != 1 || st.st_uid != ::geteuid()) {
    ::close(fd);
    return Status(ErrorCode::kPermissionDenied,
                  "lock file " + path + " is not a regular file of this agent's own (a link or another user's); remove it");
  }
  // A holder whose pid is written there but who is gone (an agent killed
  // with -9) can leave the lock held a moment longer: a child it was
  // spawning holds a copy of the descriptor until its exec closes it. Such a
  // lock is waited for, a while; a live holder is another agent, refused
  // at once.
  const auto give_up = std::chrono::steady_clock::now() + kDeadHolderWait;
  while (::flock(fd, LOCK_EX | LOCK_NB) != 0) {
    int err = errno;
    char buf[32] = {};
    ssize_t n = ::pread(fd, buf, sizeof buf - 1, 0);
    std::string holder = n > 0 ? std::string(buf, static_cast<size_t>(n)) : "unknown";
    while (!holder.empty() && (holder.back() == '\n' || holder.back() == ' ')) holder.pop_back();
    if (err == EWOULDBLOCK && HolderIsGone(holder) && std::chrono::steady_clock::now() < give_up) {
      std::this_thread::sleep_for(std::chrono::milliseconds(20));
      continue;
    }
    ::close(fd);
    if (err != EWOULDBLOCK) return ErrnoError("cannot lock " + path, err);
    return Status(ErrorCode::kAlreadyExists, "held by pid " + holder + " (lock file " + path + ")");
  }
  // Written over the old content, then cut to length: on a full disk the
  // file's existing block takes the new pid, where truncating first would
  // free it. The pid only names the holder in the next one's refusal; the
  // lock is the flock, held already, so a write that fails still starts.
  std::string pid = std::to_string(::getpid()) + "\n";
  if (::pwrite(fd, pid.data(), pid.size(), 0) == static_cast<ssize_t>(pid.size())) {
    (void)::ftruncate(fd, static_cast<off_t>(pid.size()));
  }
  return PidLock(path, fd);
}

PidLock::PidLock(PidLock&& other) noexcept : path_(std::move(other.path_)), fd_(other.fd_) {
  other.fd_ = -1;
}

PidLock& PidLock::operator=(PidLock&& other) noexcept {
  if (this != &other) {
    if (fd_ >= 0) ::close(fd_);
    path_ = std::move(other.path_);
    fd_ = other.fd_;
    other.fd_ = -1;
  }
  return *this;
}

PidLock::~PidLock() {
  if (fd_ >= 0) ::close(fd_);
}

}  // namespace gpuctl::sys
