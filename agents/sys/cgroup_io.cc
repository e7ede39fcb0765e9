#include "agents/sys/cgroup_io.h"

#include <dirent.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>

namespace gpuctl::sys {

Status CgroupErrno(const std::string& what, int err) {
  ErrorCode code = ErrorCode::kIo;
  switch (err) {
    case ENOENT:
    case ESRCH: code = ErrorCode::kNotFound; break;
    case EACCES:
    case EPERM: code = ErrorCode::kPermissionDenied; break;
    case EEXIST: code = ErrorCode::kAlreadyExists; break;
    case EINVAL: code = ErrorCode::kInvalidArgument; break;
    case EBUSY:
    case ENOTEMPTY:
    case EOPNOTSUPP: code = ErrorCode::kFailedPrecondition; break;
    default: break;
  }
  return Status(code, what + ": " + std::strerror(err));
}

Result<std::string> JoinCgroupPath(const std::string& mount, std::string_view path) {
  if (path.empty() || path.front() != '/') {
    return InvalidArgument("cgroup path '" + std::string(path) + "' must start with '/'");
  }
  if (path.find('\0') != std::string_view::npos) return InvalidArgument("cgroup path contains NUL");
  std::string joined = mount;
  while (joined.size() > 1 && joined.back() == '/') joined.pop_back();
  std::string_view rest = path.substr(1);
  while (!rest.empty()) {
    size_t slash = rest.find('/');
    std::string_view part = rest.substr(0, slash);
    // A trailing '/' ("/a/") is tolerated; an empty part in the middle is not.
    if (part.empty() && slash == std::string_view::npos) break;
    if (part.empty() || part == "." || part == "..") {
      return InvalidArgument("cgroup path '" + std::string(path) + "' has an empty, '.' or '..' part");
    }
    joined += '/';
    joined += part;
    if (slash == std::string_view::npos) break;
    rest.remove_prefix(slash + 1);
  }
  return joined;
}

Result<std::string> ParentCgroupPath(std::string_view path) {
  while (path.size() > 1 && path.back() == '/') path.remove_suffix(1);
  if (path.empty() || path == "/") return InvalidArgument("the root cgroup has no parent");
  size_t slash = path.rfind('/');
  if (slash == std::string_view::npos) return InvalidArgument("cgroup path '" + std::string(path) + "' must start with '/'");
  if (slash == 0) return std::string("/");
  return std::string(path.substr(0, slash));
}

Result<std::string> ReadControlFile(const std::string& file) {
  int fd = ::open(file.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return CgroupErrno("cannot read " + file, errno);
  std::string text;
  char buf[4096];
  while (true) {
    ssize_t n = ::read(fd, buf, sizeof buf);
    if (n == 0) break;
    if (n < 0) {
      if (errno == EINTR) continue;
      int err = errno;
      ::close(fd);
      return CgroupErrno("cannot read " + file, err);
    }
    text.append(buf, static_cast<size_t>(n));
  }
  ::close(fd);
  return text;
}

Status WriteControlFile(const std::string& file, std::string_view value) {
  // O_TRUNC is ignored by cgroupfs and leaves fixture files holding exactly
  // the last value written, which is what the tests check.
  int fd = ::open(file.c_str(), O_WRONLY | O_TRUNC | O_CLOEXEC);
  if (fd < 0) return CgroupErrno("cannot open " + file + " for writing", errno);
  ssize_t n = 0;
  do {
    n = ::write(fd, value.data(), value.size());
  } while (n < 0 && errno == EINTR);
  int err = n < 0 ? errno : 0;
  ::close(fd);
  if (err != 0) return CgroupErrno("cannot write '" + std::string(value) + "' to " + file, err);
  if (static_cast<size_t>(n) != value.size()) return IoError("short write to " + file);
  return Status::Ok();
}

bool ControlFileExists(const std::string& file) {
  struct stat st {};
  return ::stat(file.c_str(), &st) == 0;
}

Result<uint64_t> ReadNumberFile(const std::string& file) {
  Result<std::string> text = ReadControlFile(file);
  if (!text.ok()) return text.status();
  Result<uint64_t> n = ParseCgroupNumber(*text);
  if (!n.ok()) return n.status().Wrap(file);
  return n;
}

Result<FlatKeyed> ReadKeyedFile(const std::string& file) {
  Result<std::string> text = ReadControlFile(file);
  if (!text.ok()) return text.status();
  Result<FlatKeyed> values = ParseFlatKeyed(*text);
  if (!values.ok()) return values.status().Wrap(file);
  return values;
}

Result<std::vector<int64_t>> ReadProcsFile(const std::string& file) {
  Result<std::string> text = ReadControlFile(file);
  if (!text.ok()) return text.status();
  Result<std::vector<int64_t>> pids = ParseCgroupProcs(*text);
  if (!pids.ok()) return pids.status().Wrap(file);
  return pids;
}

Status MakeCgroupDir(const std::string& dir) {
  if (::mkdir(dir.c_str(), 0755) != 0) return CgroupErrno("cannot create cgroup " + dir, errno);
  return Status::Ok();
}

Status RemoveCgroupDir(const std::string& dir) {
  if (::rmdir(dir.c_str()) != 0) return CgroupErrno("cannot remove cgroup " + dir, errno);
  return Status::Ok();
}

Result<std::vector<std::string>> ChildCgroupNames(const std::string& dir) {
  DIR* listing = ::opendir(dir.c_str());
  if (listing == nullptr) return CgroupErrno("cannot list cgroup " + dir, errno);
  std::vector<std::string> names;
  while (const dirent* entry = ::readdir(listing)) {
    const std::string name = entry->d_name;
    if (name == "." || name == "..") continue;
    bool is_dir = entry->d_type == DT_DIR;
    if (entry->d_type == DT_UNKNOWN) {  // a file system that does not say
      struct stat st {};
      is_dir = ::stat((dir + "/" + name).c_str(), &st) == 0 && S_ISDIR(st.st_mode);
    }
    if (is_dir) names.push_back(name);
  }
  ::closedir(listing);
  std::sort(names.begin(), names.end());
  return names;
}

}  // namespace gpuctl::sys
