// Waits for a file to change (inotify), so log followers wake when bytes
// arrive instead of polling with sleeps. Interruptible for prompt shutdown.
#pragma once

#include <chrono>
#include <memory>
#include <string>

#include "common/status.h"

namespace gpuctl::sys {

class FileChangeWaiter {
 public:
  virtual ~FileChangeWaiter() = default;
  // Returns when the file was modified, moved or deleted since the last call
  // (true), when `timeout` passed (false), or when Interrupt() was called
  // (false). Spurious true returns are allowed; callers re-read the file.
  virtual bool Wait(std::chrono::milliseconds timeout) = 0;
  // Wakes a Wait() in progress and makes later Waits return false at once.
  // Thread-safe.
  virtual void Interrupt() = 0;
};

// Errors: kNotFound when `path` does not exist; kPermissionDenied when it
// may not be read; kIo when inotify fails (e.g. the per-user watch limit).
// The watch follows the file (the inode), not the name: after a move or
// delete Wait reports true once and then only times out, so a follower that
// sees the name point at a new file watches that one afresh.
Result<std::unique_ptr<FileChangeWaiter>> WatchFile(const std::string& path);

}  // namespace gpuctl::sys
