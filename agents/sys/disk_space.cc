#include "agents/sys/disk_space.h"

#include <fcntl.h>
#include <linux/falloc.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>

#include "agents/sys/confined_root.h"
#include "agents/sys/files.h"

namespace gpuctl::sys {
namespace {

constexpr size_t kMinSpare = 4096;

Status WriteAll(int fd, std::string_view data, off_t offset, const std::string& what) {
  while (!data.empty()) {
    ssize_t n = ::pwrite(fd, data.data(), data.size(), offset);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) return ErrnoError("cannot write " + what, errno);
    data.remove_prefix(static_cast<size_t>(n));
    offset += n;
  }
  return Status::Ok();
}

}  // namespace

Status KeepSpareFile(const std::string& spare, size_t bytes) {
  Result<ParentDir> parent = OpenParentDir(spare);
  if (!parent.ok()) return parent.status();
  struct stat st {};
  if (::fstatat(parent->fd.get(), parent->leaf.c_str(), &st, AT_SYMLINK_NOFOLLOW) == 0 && S_ISREG(st.st_mode) &&
      static_cast<size_t>(st.st_size) >= bytes) {
    return Status::Ok();
  }
  return WriteFileAtomic(spare, std::string(std::max(kMinSpare, 2 * bytes), ' '), 0600);
}

Status WriteFileFromSpare(const std::string& spare, const std::string& path, std::string_view content) {
  Result<ParentDir> parent = OpenParentDir(spare);
  if (!parent.ok()) return parent.status();
  const int dir = parent->fd.get();
  // No O_TRUNC: truncating would free the very blocks this write needs.
  int fd = ::openat(dir, parent->leaf.c_str(), O_WRONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
  if (fd < 0) {
    if (errno == ENOENT) return FailedPrecondition("no spare file " + spare);
    return ErrnoError("cannot open " + spare, errno);
  }
  struct stat st {};
  if (::fstat(fd, &st) != 0 || !S_ISREG(st.st_mode) || static_cast<size_t>(st.st_size) < content.size()) {
    ::close(fd);
    return FailedPrecondition("the spare file " + spare + " is too small for " + std::to_string(content.size()) +
                              " bytes");
  }
  // Then cut to length: shrinking a file frees blocks, it needs none.
  Status written = WriteAll(fd, content, 0, spare);
  if (written.ok() && ::ftruncate(fd, static_cast<off_t>(content.size())) != 0) {
    written = ErrnoError("cannot cut " + spare + " to length", errno);
  }
  if (written.ok() && ::fsync(fd) != 0) written = ErrnoError("cannot flush " + spare, errno);
  ::close(fd);
  if (!written.ok()) return written;
  Result<ParentDir> target = OpenParentDir(path);
  if (!target.ok()) return target.status();
  if (::renameat(dir, parent->leaf.c_str(), target->fd.get(), target->leaf.c_str()) != 0) {
    return ErrnoError("cannot rename " + spare + " to " + path, errno);
  }
  if (::fsync(target->fd.get()) != 0) return ErrnoError("cannot sync the directory of " + path, errno);
  return Status::Ok();
}

Status AllocateAhead(int fd, uint64_t offset, uint64_t bytes) {
  if (::fallocate(fd, FALLOC_FL_KEEP_SIZE, static_cast<off_t>(offset), static_cast<off_t>(bytes)) != 0) {
    return ErrnoError("cannot allocate ahead", errno);
  }
  return Status::Ok();
}

bool IsOutOfSpace(const Status& status) {
  // ErrnoError keeps errno only as its words.
  const std::string& m = status.message();
  return m.find(std::strerror(ENOSPC)) != std::string::npos || m.find(std::strerror(EDQUOT)) != std::string::npos;
}

std::optional<uint64_t> FreeBytes(const std::string& path) {
  struct statvfs vfs {};
  if (::statvfs(path.c_str(), &vfs) != 0) return std::nullopt;
  return static_cast<uint64_t>(vfs.f_bavail) * static_cast<uint64_t>(vfs.f_frsize);
}

}  // namespace gpuctl::sys
