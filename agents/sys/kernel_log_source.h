// Kernel log lines from a path, without ever blocking: the agent's one loop
// thread polls it between other work. What the path is decides how it is
// read (fstat after open):
//
//   /dev/kmsg (char device 1:11)  Each read() returns one record,
//       "PRI,SEQ,USEC,FLAGS;text" then continuation lines " KEY=VALUE";
//       ReadLines returns the first line of each record, prefix and all (the
//       prefix says who wrote it: see agents/health/xid.h). Opened at the
//       end: records from before the agent started are skipped, unless
//       from_start. EPIPE (records overwritten before we read them) is
//       counted in lost_records() and reading goes on.
//   a regular file  Tailed: from its end (a partial line there is skipped
//       up to its newline) or its start. A file replaced under the path
//       (rotation: another inode) is followed from its start once the old
//       one is read to its end; a file shorter than what was read
//       (truncation) is read again from its start. Either way a partial
//       line left from before is dropped. (A file truncated and refilled
//       past the old size between two calls looks like one that grew.)
//   a FIFO  Opened O_RDONLY|O_NONBLOCK (no writer needed); lines split on
//       '\n'. A writer that closes leaves the FIFO open for the next one.
//       (poll() then reports POLLHUP until a writer opens again.)
//
// Any other kind (a directory, a socket, another device) is refused: a
// device such as /dev/zero would never run dry. The path is followed if it
// is a link: it comes from the agent's configuration, not from a job.
//
// A line is returned without its '\n' (and without a '\r' before it). A
// partial last line waits, buffered, for its newline; one that grows past
// kMaxLineBytes is dropped whole (no kernel line is that long: printk caps
// a record near 8 KiB) and counted in overlong_lines().
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "agents/sys/unique_fd.h"
#include "common/status.h"

namespace gpuctl::sys {

class KernelLogSource {
 public:
  static constexpr size_t kMaxLineBytes = 64 * 1024;

  enum class Kind { kKmsg, kRegularFile, kFifo };

  // Errors: kNotFound (no such path), kPermissionDenied, kFailedPrecondition
  // (a kind of file this cannot read, named), kIo.
  static Result<KernelLogSource> Open(std::string path, bool from_start);

  KernelLogSource(KernelLogSource&&) noexcept = default;
  KernelLogSource& operator=(KernelLogSource&&) noexcept = default;
  KernelLogSource(const KernelLogSource&) = delete;
  KernelLogSource& operator=(const KernelLogSource&) = delete;

  // The complete lines that can be read now, at most max_lines (the rest
  // wait for the next call), from at most 16 MiB read. Never blocks. A read error other than "nothing
  // yet" ends the call early with what was read; it is kept in
  // last_error() (cleared by the next call that reads without one).
  std::vector<std::string> ReadLines(size_t max_lines = 4096);

  // For poll(): readable when there is more. For a regular file the
  // descriptor changes when the file is rotated; ask again after each
  // ReadLines.
  int fd() const { return fd_.get(); }
  Kind kind() const { return kind_; }
  const std::string& path() const { return path_; }

  uint64_t lost_records() const { return lost_records_; }
  uint64_t overlong_lines() const { return overlong_lines_; }
  const Status& last_error() const { return last_error_; }

 private:
  KernelLogSource(std::string path, Kind kind, UniqueFd fd);

  // Appends up to max_lines - lines.size() complete lines from buffer_.
  void TakeBufferedLines(std::vector<std::string>& lines, size_t max_lines);
  // One read() into buffer_ (or one record into `lines`, for kmsg); false
  // when there is nothing to read now.
  bool ReadOnce(std::vector<std::string>& lines);
  bool ReadRecord(std::vector<std::string>& lines);
  // At the end of a regular file: follows a rotation or truncation; true
  // when there may be more to read.
  bool FollowRegularFile();
  void ForgetPartialLine();

  std::string path_;
  Kind kind_ = Kind::kRegularFile;
  UniqueFd fd_;
  // Regular files: which file fd_ is, and how far it was read.
  uint64_t device_ = 0;
  uint64_t inode_ = 0;
  uint64_t offset_ = 0;
  std::string buffer_;        // bytes read, not yet returned as lines
  size_t call_bytes_ = 0;     // read in this ReadLines call
  bool skipping_ = false;     // dropping bytes up to the next '\n'
  uint64_t lost_records_ = 0;
  uint64_t overlong_lines_ = 0;
  Status last_error_;
};

}  // namespace gpuctl::sys
