// An exclusive, advisory lock file holding the owner's pid, so a second
// gpuctld on the same socket or state dir fails loudly instead of stealing it.
// The kernel drops the lock when the process dies, so a crash never leaves a
// stale lock behind (the file stays, unlocked).
#pragma once

#include <chrono>
#include <string>

#include "common/status.h"

namespace gpuctl::sys {

class PidLock {
 public:
  // Errors: kAlreadyExists with the holder's pid when another process holds
  // it; kPermissionDenied / kIo when the file cannot be opened. A lock still
  // held though the pid written in it is gone (a child of a killed agent,
  // between its spawn and its exec) is waited for, up to kDeadHolderWait.
  static Result<PidLock> Acquire(const std::string& path);
  static constexpr std::chrono::milliseconds kDeadHolderWait{3000};

  PidLock(PidLock&& other) noexcept;
  PidLock& operator=(PidLock&& other) noexcept;
  PidLock(const PidLock&) = delete;
  PidLock& operator=(const PidLock&) = delete;
  ~PidLock();

  const std::string& path() const { return path_; }

 private:
  PidLock(std::string path, int fd) : path_(std::move(path)), fd_(fd) {}
  std::string path_;
  int fd_ = -1;
};

}  // namespace gpuctl::sys
