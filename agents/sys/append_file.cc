#include "agents/sys/append_file.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>

#include "agents/sys/confined_root.h"

namespace gpuctl::sys {

Result<AppendTarget> OpenForAppend(const std::string& path, unsigned mode) {
  Result<UniqueFd> fd = OpenPath(path, O_WRONLY | O_CREAT | O_APPEND | O_NOFOLLOW, mode);
  if (!fd.ok()) return ErrnoError("cannot open " + path, errno);
  struct stat st {};
  if (::fstat(fd->get(), &st) != 0) return ErrnoError("cannot stat " + path, errno);
  if (!S_ISREG(st.st_mode)) return FailedPrecondition(path + " is not a regular file");
  return AppendTarget{std::move(*fd), static_cast<uint64_t>(st.st_size)};
}

Status AppendAll(int fd, std::string_view bytes, uint64_t size_before, const std::string& what) {
  size_t written = 0;
  while (written < bytes.size()) {
    ssize_t n = ::write(fd, bytes.data() + written, bytes.size() - written);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) {
      int err = errno;
      if (written > 0) (void)::ftruncate(fd, static_cast<off_t>(size_before));
      return ErrnoError("cannot append to " + what, err);
    }
    written += static_cast<size_t>(n);
  }
  return Status::Ok();
}

}  // namespace gpuctl::sys
