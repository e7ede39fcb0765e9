#include "agents/sys/identified_file.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>

namespace gpuctl::sys {

Result<IdentifiedFile> IdentifiedFile::Open(const std::string& path, uint64_t device, uint64_t inode) {
  // Looked at before it is opened: O_PATH opens nothing, so a device node or
  // a FIFO put at the path is never opened (a tty's open alone acts on it),
  // and the reopen through /proc is of the very inode checked here.
  UniqueFd at(::open(path.c_str(), O_PATH | O_NOFOLLOW | O_CLOEXEC));
  if (!at.valid()) {
    if (errno == ENOENT) return NotFound(path + " does not exist");
    return ErrnoError("cannot open " + path, errno);
  }
  struct stat st {};
  if (::fstat(at.get(), &st) != 0) return ErrnoError("cannot stat " + path, errno);
  if (!S_ISREG(st.st_mode)) return FailedPrecondition(path + " is not a regular file; it is not read");
  if (static_cast<uint64_t>(st.st_dev) != device || static_cast<uint64_t>(st.st_ino) != inode) {
    return FailedPrecondition(path + " is now another file than the one named (device " + std::to_string(device) +
                              ", inode " + std::to_string(inode) + ")");
  }
  // Opening for reading checks the caller's permission, as open(path) would.
  UniqueFd fd(::open(("/proc/self/fd/" + std::to_string(at.get())).c_str(), O_RDONLY | O_CLOEXEC));
  if (!fd.valid()) return ErrnoError("cannot open " + path, errno);
  return IdentifiedFile(std::move(fd), path, device, inode);
}

Result<size_t> IdentifiedFile::ReadAt(uint64_t offset, char* out, size_t size) const {
  while (true) {
    ssize_t n = ::pread(fd_.get(), out, size, static_cast<off_t>(offset));
    if (n >= 0) return static_cast<size_t>(n);
    if (errno != EINTR) return ErrnoError("cannot read " + path_, errno);
  }
}

}  // namespace gpuctl::sys
