#include "agents/sys/files.h"

#include <fcntl.h>
#include <pwd.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <filesystem>

#include "agents/sys/confined_root.h"
#include "agents/sys/unique_fd.h"

namespace gpuctl::sys {

namespace fs = std::filesystem;

namespace {

// EnsureDir beneath a container root: each level is made in its parent as
// resolved inside the root, so a link planted on the way stays inside.
Status EnsureDirBeneath(const ConfinedPath& where, unsigned mode) {
  std::string built = where.root;
  for (const auto& part : fs::path(where.rest)) {
    if (part.empty() || part == ".") continue;
    built += "/" + part.string();
    Result<ParentDir> parent = OpenParentDir(built);
    if (!parent.ok()) return parent.status();
    if (::mkdirat(parent->fd.get(), parent->leaf.c_str(), static_cast<mode_t>(mode)) == 0) {
      if (::fchmodat(parent->fd.get(), parent->leaf.c_str(), static_cast<mode_t>(mode), 0) != 0) {
        return ErrnoError("cannot set mode of " + built, errno);
      }
    } else if (errno != EEXIST) {
      return ErrnoError("cannot create directory " + built, errno);
    }
  }
  Result<UniqueFd> dir = OpenPath(built, O_RDONLY | O_DIRECTORY);
  if (!dir.ok()) return FailedPrecondition(built + " is not a directory inside " + where.root);
  return Status::Ok();
}

}  // namespace

Status EnsureDir(const std::string& path, unsigned mode) {
  if (path.empty()) return InvalidArgument("empty directory path");
  if (std::optional<ConfinedPath> where = FindConfinedRoot(path)) return EnsureDirBeneath(*where, mode);
  fs::path p(path);
  fs::path built;
  for (const auto& part : p) {
    built /= part;
    if (built == built.root_path()) continue;
    if (::mkdir(built.c_str(), static_cast<mode_t>(mode)) == 0) {
      // mkdir applies the umask; the mode we promise must hold regardless.
      if (::chmod(built.c_str(), static_cast<mode_t>(mode)) != 0) {
        return ErrnoError("cannot set mode of " + built.string(), errno);
      }
    } else if (errno != EEXIST) {
      return ErrnoError("cannot create directory " + built.string(), errno);
    }
  }
  struct stat st {};
  if (::stat(path.c_str(), &st) != 0) return ErrnoError("cannot stat " + path, errno);
  if (!S_ISDIR(st.st_mode)) return FailedPrecondition(path + " exists and is not a directory");
  return Status::Ok();
}

bool IsWritableDir(const std::string& path) {
  struct stat st {};
  return ::stat(path.c_str(), &st) == 0 && S_ISDIR(st.st_mode) && ::access(path.c_str(), W_OK) == 0;
}

std::string HomeDirectory() {
  std::string home;
  if (const passwd* entry = ::getpwuid(::geteuid()); entry != nullptr && entry->pw_dir != nullptr) {
    home = entry->pw_dir;
  } else if (const char* env = std::getenv("HOME")) {
    home = env;
  }
  struct stat st {};
  if (home.empty() || home.front() != '/' || ::stat(home.c_str(), &st) != 0 || !S_ISDIR(st.st_mode)) return "/";
  return home;
}

Status CheckPrivateDir(const std::string& path) {
  struct stat st {};
  if (::lstat(path.c_str(), &st) != 0) return ErrnoError("cannot stat " + path, errno);
  if (S_ISLNK(st.st_mode)) {
    return Status(ErrorCode::kPermissionDenied, path + " is a symbolic link; it must be a directory of its own");
  }
  if (!S_ISDIR(st.st_mode)) return Status(ErrorCode::kPermissionDenied, path + " is not a directory");
  if (st.st_uid != ::geteuid()) {
    return Status(ErrorCode::kPermissionDenied,
                  path + " is owned by uid " + std::to_string(st.st_uid) + ", not by this agent's uid " +
                      std::to_string(::geteuid()) + "; another user could replace what is in it. Remove it, or chown it");
  }
  if ((st.st_mode & 022) != 0) {
    char mode[8];
    std::snprintf(mode, sizeof mode, "%04o", static_cast<unsigned>(st.st_mode & 07777));
    return Status(ErrorCode::kPermissionDenied, path + " has mode " + mode +
                                                    ": others may write in it. chmod go-w " + path +
                                                    " (gpuctld creates it 0700 itself when it is missing)");
  }
  return Status::Ok();
}

Status ChangeMode(const std::string& path, unsigned mode) {
  if (::chmod(path.c_str(), static_cast<mode_t>(mode)) != 0) {
    return ErrnoError("cannot chmod " + path, errno);
  }
  return Status::Ok();
}

Status WriteFileAtomic(const std::string& path, std::string_view content, unsigned mode) {
  // A fresh temp file of our own: O_EXCL|O_NOFOLLOW, so a file or link
  // planted under the temp name (a container can write its job dirs) is
  // never opened, let alone truncated.
  // All of it happens in the parent directory opened once (resolved inside
  // a container's root when it is beneath one): a directory swapped for a
  // link halfway cannot send the rename elsewhere.
  static std::atomic<uint64_t> counter{0};
  Result<ParentDir> parent = OpenParentDir(path);
  if (!parent.ok()) return parent.status();
  const int dir = parent->fd.get();
  std::string tmp_leaf, tmp;
  int fd = -1;
  for (int attempt = 0; attempt < 8 && fd < 0; ++attempt) {
    tmp_leaf = parent->leaf + ".tmp." + std::to_string(::getpid()) + "." + std::to_string(counter.fetch_add(1));
    tmp = path + tmp_leaf.substr(parent->leaf.size());
    fd = ::openat(dir, tmp_leaf.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, static_cast<mode_t>(mode));
    if (fd < 0 && errno != EEXIST) break;
  }
  if (fd < 0) return ErrnoError("cannot create " + tmp, errno);
  size_t written = 0;
  while (written < content.size()) {
    ssize_t n = ::write(fd, content.data() + written, content.size() - written);
    if (n < 0) {
      if (errno == EINTR) continue;
      int err = errno;
      ::close(fd);
      ::unlinkat(dir, tmp_leaf.c_str(), 0);
      return ErrnoError("cannot write " + tmp, err);
    }
    written += static_cast<size_t>(n);
  }
  if (::fsync(fd) != 0 || ::close(fd) != 0) {
    int err = errno;
    ::unlinkat(dir, tmp_leaf.c_str(), 0);
    return ErrnoError("cannot flush " + tmp, err);
  }
  if (::renameat(dir, tmp_leaf.c_str(), dir, parent->leaf.c_str()) != 0) {
    int err = errno;
    ::unlinkat(dir, tmp_leaf.c_str(), 0);
    return ErrnoError("cannot rename " + tmp + " to " + path, err);
  }
  // The rename itself is durable only once the directory is synced.
  if (::fsync(dir) != 0) return ErrnoError("cannot sync the directory of " + path, errno);
  return Status::Ok();
}

Result<std::string> ReadWholeFile(const std::string& path) {
  // Through OpenPath, as the header promises: beneath a container's root a
  // planted link resolves inside it. O_NONBLOCK: a FIFO put there reads as
  // empty instead of blocking the agent.
  Result<UniqueFd> fd = OpenPath(path, O_RDONLY | O_NONBLOCK);
  if (!fd.ok()) return ErrnoError("cannot read " + path, errno ? errno : ENOENT);
  std::string text;
  char buf[8192];
  while (true) {
    ssize_t n = ::read(fd->get(), buf, sizeof buf);
    if (n == 0 || (n < 0 && errno == EAGAIN)) break;
    if (n < 0) {
      if (errno == EINTR) continue;
      return ErrnoError("cannot read " + path, errno);
    }
    text.append(buf, static_cast<size_t>(n));
  }
  return text;
}

Status RemoveFile(const std::string& path) {
  Result<ParentDir> parent = OpenParentDir(path);
  if (!parent.ok()) return parent.status().code() == ErrorCode::kNotFound ? Status::Ok() : parent.status();
  if (::unlinkat(parent->fd.get(), parent->leaf.c_str(), 0) != 0 && errno != ENOENT) {
    return ErrnoError("cannot remove " + path, errno);
  }
  return Status::Ok();
}

Status RenameFile(const std::string& from, const std::string& to) {
  Result<ParentDir> source = OpenParentDir(from);
  if (!source.ok()) return source.status();
  Result<ParentDir> target = OpenParentDir(to);
  if (!target.ok()) return target.status();
  if (::renameat(source->fd.get(), source->leaf.c_str(), target->fd.get(), target->leaf.c_str()) != 0) {
    return ErrnoError("cannot rename " + from + " to " + to, errno);
  }
  return Status::Ok();
}

bool PathExists(const std::string& path) { return OpenPath(path, O_PATH | O_NOFOLLOW).ok(); }

Result<uint64_t> FileSize(const std::string& path) {
  struct stat st {};
  if (::stat(path.c_str(), &st) != 0) return ErrnoError("cannot stat " + path, errno);
  return static_cast<uint64_t>(st.st_size);
}

Result<std::string> ReadFileRange(const std::string& path, uint64_t offset, size_t max_bytes) {
  int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return ErrnoError("cannot open " + path, errno);
  std::string data(max_bytes, '\0');
  size_t got = 0;
  while (got < max_bytes) {
    ssize_t n = ::pread(fd, data.data() + got, max_bytes - got, static_cast<off_t>(offset + got));
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) {
      int err = errno;
      ::close(fd);
      return ErrnoError("cannot read " + path, err);
    }
    if (n == 0) break;
    got += static_cast<size_t>(n);
  }
  ::close(fd);
  data.resize(got);
  return data;
}

namespace {

const char* FileKind(mode_t mode) {
  if (S_ISLNK(mode)) return "a symbolic link";
  if (S_ISFIFO(mode)) return "a FIFO";
  if (S_ISDIR(mode)) return "a directory";
  if (S_ISSOCK(mode)) return "a socket";
  if (S_ISCHR(mode) || S_ISBLK(mode)) return "a device";
  return "not a regular file";
}


}  // namespace

Result<UniqueFd> OpenRegularFile(const std::string& path) {
  Result<UniqueFd> opened = OpenPath(path, O_RDONLY | O_NOFOLLOW | O_NONBLOCK);
  UniqueFd fd = opened.ok() ? std::move(*opened) : UniqueFd();
  if (!fd.valid()) {
    int err = errno;
    if (err == ENOENT) return NotFound(path + " does not exist");
    if (err == ELOOP) return FailedPrecondition(path + " is a symbolic link; it is not followed");
    return ErrnoError("cannot open " + path, err);
  }
  struct stat st {};
  if (::fstat(fd.get(), &st) != 0) return ErrnoError("cannot stat " + path, errno);
  if (!S_ISREG(st.st_mode)) {
    return FailedPrecondition(path + " is " + FileKind(st.st_mode) + ", not a regular file; it is not read");
  }
  return fd;
}

Result<size_t> ReadRegularFileRangeInto(const std::string& path, uint64_t offset, size_t max_bytes,
                                        std::string& buffer) {
  Result<UniqueFd> fd = OpenRegularFile(path);
  if (!fd.ok()) return fd.status();
  // What is read is sized to what the file holds now, not to max_bytes: a
  // follower at the end of a log asks for 256 KiB and gets nothing, and a
  // thousand of them must not churn the heap with 256 KiB buffers. Bytes
  // written after the fstat are read next time.
  struct stat st {};
  if (::fstat(fd->get(), &st) != 0) return ErrnoError("cannot stat " + path, errno);
  const uint64_t size = static_cast<uint64_t>(st.st_size);
  const size_t want = size > offset ? static_cast<size_t>(std::min<uint64_t>(max_bytes, size - offset)) : 0;
  if (buffer.size() < want) buffer.resize(want);
  size_t got = 0;
  while (got < want) {
    ssize_t n = ::pread(fd->get(), buffer.data() + got, want - got, static_cast<off_t>(offset + got));
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) return ErrnoError("cannot read " + path, errno);
    if (n == 0) break;
    got += static_cast<size_t>(n);
  }
  return got;
}

Result<std::string> ReadRegularFileRange(const std::string& path, uint64_t offset, size_t max_bytes) {
  std::string data;
  Result<size_t> got = ReadRegularFileRangeInto(path, offset, max_bytes, data);
  if (!got.ok()) return got.status();
  data.resize(*got);
  return data;
}

Result<std::string> ReadRegularFile(const std::string& path, size_t max_bytes) {
  return ReadRegularFileRange(path, 0, max_bytes);
}

Result<FileIdentity> RegularFileIdentity(const std::string& path) {
  struct stat st {};
  // O_PATH: never blocks, even on a FIFO; the link itself when it is one.
  Result<UniqueFd> fd = OpenPath(path, O_PATH | O_NOFOLLOW);
  if (!fd.ok() || ::fstat(fd->get(), &st) != 0) {
    if (errno == ENOENT) return NotFound(path + " does not exist");
    return ErrnoError("cannot stat " + path, errno);
  }
  if (!S_ISREG(st.st_mode)) {
    return FailedPrecondition(path + " is " + FileKind(st.st_mode) + ", not a regular file; it is not read");
  }
  return FileIdentity{static_cast<uint64_t>(st.st_dev), static_cast<uint64_t>(st.st_ino),
                      static_cast<uint64_t>(st.st_size)};
}

Result<uint64_t> RegularFileSize(const std::string& path) {
  Result<FileIdentity> identity = RegularFileIdentity(path);
  if (!identity.ok()) return identity.status();
  return identity->size;
}

bool IsDirectory(const std::string& path) {
  struct stat st {};
  Result<UniqueFd> fd = OpenPath(path, O_PATH);  // links followed (inside a container's root)
  return fd.ok() && ::fstat(fd->get(), &st) == 0 && S_ISDIR(st.st_mode);
}

bool IsRealDirectory(const std::string& path) {
  struct stat st {};
  Result<UniqueFd> fd = OpenPath(path, O_PATH | O_NOFOLLOW);  // a link opens as itself
  return fd.ok() && ::fstat(fd->get(), &st) == 0 && S_ISDIR(st.st_mode);
}

bool IsRegularFile(const std::string& path) {
  struct stat st {};
  return ::stat(path.c_str(), &st) == 0 && S_ISREG(st.st_mode);
}

std::optional<std::string> FindOnPath(const std::string& program, const std::string& path_list) {
  size_t start = 0;
  while (start <= path_list.size()) {
    size_t end = path_list.find(':', start);
    if (end == std::string::npos) end = path_list.size();
    std::string dir = path_list.substr(start, end - start);
    std::string candidate = (dir.empty() ? "." : dir) + "/" + program;
    if (IsExecutableFile(candidate)) return candidate;
    start = end + 1;
  }
  return std::nullopt;
}

bool IsExecutableFile(const std::string& path) {
  struct stat st {};
  if (FindConfinedRoot(path)) {
    // Root inside the container may run what has any execute bit.
    Result<UniqueFd> fd = OpenPath(path, O_PATH);
    return fd.ok() && ::fstat(fd->get(), &st) == 0 && S_ISREG(st.st_mode) && (st.st_mode & 0111) != 0;
  }
  return ::stat(path.c_str(), &st) == 0 && S_ISREG(st.st_mode) && ::access(path.c_str(), X_OK) == 0;
}

bool WriteToFifoIfRead(const std::string& path, std::string_view text) {
  int fd = ::open(path.c_str(), O_WRONLY | O_NONBLOCK | O_CLOEXEC);
  if (fd < 0) return false;  // ENXIO: nobody reads it
  struct stat st {};
  bool fifo = ::fstat(fd, &st) == 0 && S_ISFIFO(st.st_mode);
  bool written = fifo && ::write(fd, text.data(), text.size()) == static_cast<ssize_t>(text.size());
  ::close(fd);
  return written;
}

Status ReplaceSymlink(const std::string& target, const std::string& link) {
  ::unlink(link.c_str());
  if (::symlink(target.c_str(), link.c_str()) != 0) return ErrnoError("cannot link " + link, errno);
  return Status::Ok();
}

unsigned SetUmask(unsigned mask) { return static_cast<unsigned>(::umask(static_cast<mode_t>(mask))); }

}  // namespace gpuctl::sys
