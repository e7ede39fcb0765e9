#include "agents/sys/identified_file.h"

#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>

#include "agents/sys/files.h"

namespace gpuctl::sys {

std::string BootId() {
  Result<std::string> text = ReadFileRange("/proc/sys/kernel/random/boot_id", 0, 64);
  if (!text.ok()) return {};
  std::string id = std::move(text).value();
  while (!id.empty() && (id.back() == '\n' || id.back() == ' ')) id.pop_back();
  return id;
}

Result<IdentifiedFile> IdentifiedFile::Open(const std::string& path, uint64_t device, uint64_t inode) {
  Result<UniqueFd> fd = OpenRegularFile(path);
  if (!fd.ok()) return fd.status();
  struct stat st {};
  if (::fstat(fd->get(), &st) != 0) return ErrnoError("cannot stat " + path, errno);
  if (static_cast<uint64_t>(st.st_dev) != device || static_cast<uint64_t>(st.st_ino) != inode) {
    return FailedPrecondition(path + " is now another file than the one named (device " + std::to_string(device) +
                              ", inode " + std::to_string(inode) + ")");
  }
  return IdentifiedFile(std::move(fd).value(), path, device, inode);
}

Result<size_t> IdentifiedFile::ReadAt(uint64_t offset, char* out, size_t size) const {
  while (true) {
    ssize_t n = ::pread(fd_.get(), out, size, static_cast<off_t>(offset));
    if (n >= 0) return static_cast<size_t>(n);
    if (errno != EINTR) return ErrnoError("cannot read " + path_, errno);
  }
}

}  // namespace gpuctl::sys
