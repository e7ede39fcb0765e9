// Small filesystem operations with errors as values.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "agents/sys/unique_fd.h"
#include "common/status.h"

namespace gpuctl::sys {

// mkdir -p; directories this call creates get `mode` (existing ones are left
// as they are, so pointing the agent at /tmp never chmods /tmp).
Status EnsureDir(const std::string& path, unsigned mode);
Status ChangeMode(const std::string& path, unsigned mode);
// This process's user's home directory (from the password database, else
// $HOME), when it exists; "/" otherwise.
std::string HomeDirectory();

// A directory only this process's user may change: a real directory (not a
// symlink), owned by the effective uid, not group- or world-writable.
// Errors: kPermissionDenied saying which of these fails and how to fix it,
// kNotFound, kIo.
Status CheckPrivateDir(const std::string& path);
// Writes to a temp file in the same directory, fsyncs, renames over `path`:
// readers see the old or the new content, never a torn one.
Status WriteFileAtomic(const std::string& path, std::string_view content, unsigned mode = 0644);
Result<std::string> ReadWholeFile(const std::string& path);
// Paths beneath a container root registered with AddConfinedRoot
// (confined_root.h) are resolved inside that root by every function here.
//
// Removes a file; a missing file is not an error.
Status RemoveFile(const std::string& path);
// rename(2), each side's directory opened as above.
Status RenameFile(const std::string& from, const std::string& to);
bool PathExists(const std::string& path);
// Size in bytes; kNotFound when missing.
Result<uint64_t> FileSize(const std::string& path);
// Up to `max_bytes` from `offset` (fewer at the end of the file).
Result<std::string> ReadFileRange(const std::string& path, uint64_t offset, size_t max_bytes);
// A directory we may create entries in (access W_OK: false on a read-only
// mount too).
bool IsWritableDir(const std::string& path);
// Files a job or a container can write (logs, exit status, records). They
// may have been replaced by a symlink, a FIFO or a device: the final
// component is never followed (O_NOFOLLOW), opening never blocks
// (O_NONBLOCK), and anything but a regular file is refused with
// kFailedPrecondition naming what it is. kNotFound when missing.
// At most what fstat says the file holds is read: not for procfs or sysfs
// files, whose size reads 0 (use HostFs for those).
Result<std::string> ReadRegularFile(const std::string& path, size_t max_bytes);
Result<std::string> ReadRegularFileRange(const std::string& path, uint64_t offset, size_t max_bytes);
// The same into the front of `buffer`, which grows as needed and never
// shrinks: a reader that comes back every tick (log ingest) reuses one
// allocation instead of mapping, faulting in and zeroing a fresh one each
// time. The value is how many bytes were read.
Result<size_t> ReadRegularFileRangeInto(const std::string& path, uint64_t offset, size_t max_bytes,
                                        std::string& buffer);
Result<uint64_t> RegularFileSize(const std::string& path);
// Opens `path` read-only as the readers above do (no link followed in its
// last part, never blocking); kFailedPrecondition unless a regular file.
Result<UniqueFd> OpenRegularFile(const std::string& path);
// Which file `path` is now and how long: a file is the same file while its
// device and inode are (a rename keeps them; a new file of that name does not).
struct FileIdentity {
  uint64_t device = 0;
  uint64_t inode = 0;
  uint64_t size = 0;
};
Result<FileIdentity> RegularFileIdentity(const std::string& path);

// A directory (following links, as chdir would).
bool IsDirectory(const std::string& path);
// A directory itself, not a link to one (nothing is followed).
bool IsRealDirectory(const std::string& path);
// A regular file (following links, as open would).
bool IsRegularFile(const std::string& path);
// The first executable `program` in the ':'-separated `path_list`, or
// nullopt. Empty entries mean the current directory, as in execvp.
std::optional<std::string> FindOnPath(const std::string& program, const std::string& path_list);
// A regular file we may execute (access X_OK).
bool IsExecutableFile(const std::string& path);
// Writes `text` to the FIFO at `path` if a process reads it now, without
// waiting (O_NONBLOCK: no reader, no write). True when all of it went.
bool WriteToFifoIfRead(const std::string& path, std::string_view text);
// Makes `link` a symlink to `target`, replacing what was there.
Status ReplaceSymlink(const std::string& target, const std::string& link);

// Runs `fn` with the process umask set to `mask`, then restores it. Used to
// create the agent's socket 0600 from birth (no window where it is wider).
template <typename Fn>
auto WithUmask(unsigned mask, Fn&& fn) -> decltype(fn());
unsigned SetUmask(unsigned mask);  // returns the previous mask

template <typename Fn>
auto WithUmask(unsigned mask, Fn&& fn) -> decltype(fn()) {
  unsigned previous = SetUmask(mask);
  struct Restore {
    unsigned m;
    ~Restore() { SetUmask(m); }
  } restore{previous};
  return fn();
}

}  // namespace gpuctl::sys
