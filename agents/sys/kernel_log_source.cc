#include "agents/sys/kernel_log_source.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include <cerrno>
#include <utility>

namespace gpuctl::sys {
namespace {

// One read() at a time; a /dev/kmsg read needs room for a whole record.
constexpr size_t kKernelLogChunkBytes = KernelLogSource::kMaxLineBytes;
// What one ReadLines call reads at most, so a file that grows as fast as it
// is read (or holds no newline at all) cannot keep the loop thread.
constexpr size_t kKernelLogBytesPerCall = 16 * 1024 * 1024;

bool IsKmsgDevice(const struct stat& st) {
  return S_ISCHR(st.st_mode) && major(st.st_rdev) == 1 && minor(st.st_rdev) == 11;
}

const char* KernelLogFileKind(const struct stat& st) {
  if (S_ISDIR(st.st_mode)) return "directory";
  if (S_ISSOCK(st.st_mode)) return "socket";
  if (S_ISCHR(st.st_mode)) return "character device other than /dev/kmsg";
  if (S_ISBLK(st.st_mode)) return "block device";
  return "file of an unknown kind";
}

}  // namespace

KernelLogSource::KernelLogSource(std::string path, Kind kind, UniqueFd fd)
    : path_(std::move(path)), kind_(kind), fd_(std::move(fd)) {}

Result<KernelLogSource> KernelLogSource::Open(std::string path, bool from_start) {
  if (path.empty() || path.front() != '/') {
    return InvalidArgument("the kernel log path must be absolute, got '" + path + "'");
  }
  int raw = ::open(path.c_str(), O_RDONLY | O_NONBLOCK | O_CLOEXEC);
  if (raw < 0) return ErrnoError("cannot open the kernel log " + path, errno);
  UniqueFd fd(raw);
  struct stat st {};
  if (::fstat(fd.get(), &st) != 0) return ErrnoError("cannot stat the kernel log " + path, errno);

  Kind kind;
  if (IsKmsgDevice(st)) {
    kind = Kind::kKmsg;
  } else if (S_ISREG(st.st_mode)) {
    kind = Kind::kRegularFile;
  } else if (S_ISFIFO(st.st_mode)) {
    kind = Kind::kFifo;
  } else {
    return FailedPrecondition("the kernel log " + path + " is a " + KernelLogFileKind(st) +
                              ": give /dev/kmsg, a regular file or a FIFO");
  }

  KernelLogSource source(std::move(path), kind, std::move(fd));
  if (kind == Kind::kKmsg && !from_start && ::lseek(source.fd(), 0, SEEK_END) < 0) {
    return ErrnoError("cannot seek to the end of " + source.path_, errno);
  }
  if (kind == Kind::kRegularFile) {
    source.device_ = static_cast<uint64_t>(st.st_dev);
    source.inode_ = static_cast<uint64_t>(st.st_ino);
    if (!from_start && st.st_size > 0) {
      if (::lseek(source.fd(), st.st_size, SEEK_SET) < 0) {
        return ErrnoError("cannot seek to the end of " + source.path_, errno);
      }
      source.offset_ = static_cast<uint64_t>(st.st_size);
      // Starting inside a line would hand over its tail as a line.
      char last = '\n';
      if (::pread(source.fd(), &last, 1, st.st_size - 1) == 1 && last != '\n') source.skipping_ = true;
    }
  }
  return source;
}

std::vector<std::string> KernelLogSource::ReadLines(size_t max_lines) {
  std::vector<std::string> lines;
  last_error_ = Status::Ok();
  call_bytes_ = 0;
  while (lines.size() < max_lines && call_bytes_ < kKernelLogBytesPerCall) {
    if (kind_ != Kind::kKmsg) {
      TakeBufferedLines(lines, max_lines);
      if (lines.size() >= max_lines) break;
    }
    if (!ReadOnce(lines)) break;
  }
  // Complete lines read before the budget ran out are not kept waiting.
  if (kind_ != Kind::kKmsg) TakeBufferedLines(lines, max_lines);
  return lines;
}

void KernelLogSource::TakeBufferedLines(std::vector<std::string>& lines, size_t max_lines) {
  size_t pos = 0;
  bool all_taken = true;
  while (true) {
    if (lines.size() >= max_lines) {
      all_taken = false;
      break;
    }
    size_t newline = buffer_.find('\n', pos);
    if (newline == std::string::npos) break;
    size_t length = newline - pos;
    if (skipping_) {
      skipping_ = false;  // the tail of a dropped line ends here
    } else if (length > kMaxLineBytes) {
      ++overlong_lines_;
    } else {
      if (length > 0 && buffer_[newline - 1] == '\r') --length;
      lines.emplace_back(buffer_, pos, length);
    }
    pos = newline + 1;
  }
  buffer_.erase(0, pos);
  if (!all_taken) return;
  // What is left has no newline: a partial line.
  if (skipping_) {
    buffer_.clear();
  } else if (buffer_.size() > kMaxLineBytes) {
    ++overlong_lines_;
    buffer_.clear();
    skipping_ = true;
  }
}

bool KernelLogSource::ReadOnce(std::vector<std::string>& lines) {
  if (kind_ == Kind::kKmsg) return ReadRecord(lines);
  size_t old_size = buffer_.size();
  buffer_.resize(old_size + kKernelLogChunkBytes);
  ssize_t n = ::read(fd_.get(), buffer_.data() + old_size, kKernelLogChunkBytes);
  int err = errno;
  buffer_.resize(old_size + (n > 0 ? static_cast<size_t>(n) : 0));
  if (n > 0) {
    offset_ += static_cast<uint64_t>(n);
    call_bytes_ += static_cast<size_t>(n);
    return true;
  }
  if (n == 0) return kind_ == Kind::kRegularFile && FollowRegularFile();  // a FIFO with no writer
  if (err == EINTR) return true;
  if (err != EAGAIN && err != EWOULDBLOCK) last_error_ = ErrnoError("cannot read the kernel log " + path_, err);
  return false;
}

bool KernelLogSource::ReadRecord(std::vector<std::string>& lines) {
  buffer_.resize(kKernelLogChunkBytes);
  ssize_t n = ::read(fd_.get(), buffer_.data(), buffer_.size());
  int err = errno;
  if (n > 0) {
    call_bytes_ += static_cast<size_t>(n);
    // The record's first line; the " KEY=VALUE" lines after it are dropped.
    std::string_view record(buffer_.data(), static_cast<size_t>(n));
    std::string_view first = record.substr(0, record.find('\n'));
    lines.emplace_back(first);
    buffer_.clear();
    return true;
  }
  buffer_.clear();
  if (n == 0) return false;
  if (err == EINTR) return true;
  if (err == EPIPE) {  // overwritten before we read it; the next read moves on
    ++lost_records_;
    return true;
  }
  if (err != EAGAIN && err != EWOULDBLOCK) last_error_ = ErrnoError("cannot read " + path_, err);
  return false;
}

bool KernelLogSource::FollowRegularFile() {
  struct stat st {};
  // Gone: mid-rotation, the new file is not there yet. Try next time.
  if (::stat(path_.c_str(), &st) != 0) return false;
  if (static_cast<uint64_t>(st.st_dev) != device_ || static_cast<uint64_t>(st.st_ino) != inode_) {
    int raw = ::open(path_.c_str(), O_RDONLY | O_NONBLOCK | O_CLOEXEC);
    if (raw < 0) {
      last_error_ = ErrnoError("cannot open the rotated kernel log " + path_, errno);
      return false;
    }
    UniqueFd fd(raw);
    struct stat opened {};
    if (::fstat(fd.get(), &opened) != 0 || !S_ISREG(opened.st_mode)) {
      last_error_ = FailedPrecondition("the kernel log " + path_ + " was replaced by something other than a regular file");
      return false;
    }
    fd_ = std::move(fd);
    device_ = static_cast<uint64_t>(opened.st_dev);
    inode_ = static_cast<uint64_t>(opened.st_ino);
    offset_ = 0;
    ForgetPartialLine();
    return true;
  }
  if (static_cast<uint64_t>(st.st_size) < offset_) {
    if (::lseek(fd_.get(), 0, SEEK_SET) < 0) {
      last_error_ = ErrnoError("cannot rewind the truncated kernel log " + path_, errno);
      return false;
    }
    offset_ = 0;
    ForgetPartialLine();
    return true;
  }
  return false;
}

void KernelLogSource::ForgetPartialLine() {
  buffer_.clear();
  skipping_ = false;
}

}  // namespace gpuctl::sys
