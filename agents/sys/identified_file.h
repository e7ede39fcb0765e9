// A file a client reads because another process named it by path, device
// and inode: `gpuctl train logs` on the agent's host reads the job's log
// itself instead of taking every byte through the agent's socket. Opening
// checks that the path is still that file (a relaunch renames a log and a new
// one takes its name), so a byte of another file is never passed off as it.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>

#include "agents/sys/unique_fd.h"
#include "common/status.h"

namespace gpuctl::sys {

class IdentifiedFile {
 public:
  // Opens `path` for reading, never following a link in its last part;
  // kNotFound when missing, kFailedPrecondition when it is not a regular file
  // or is now another file than (device, inode).
  static Result<IdentifiedFile> Open(const std::string& path, uint64_t device, uint64_t inode);

  // Up to `size` bytes at `offset` into `out`; 0 at the end of the file.
  Result<size_t> ReadAt(uint64_t offset, char* out, size_t size) const;

  uint64_t device() const { return device_; }
  uint64_t inode() const { return inode_; }

 private:
  IdentifiedFile(UniqueFd fd, std::string path, uint64_t device, uint64_t inode)
      : fd_(std::move(fd)), path_(std::move(path)), device_(device), inode_(inode) {}

  UniqueFd fd_;
  std::string path_;
  uint64_t device_;
  uint64_t inode_;
};

}  // namespace gpuctl::sys
