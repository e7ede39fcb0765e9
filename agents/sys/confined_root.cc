#include "agents/sys/confined_root.h"

#include <fcntl.h>
#include <linux/openat2.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <mutex>
#include <vector>

namespace gpuctl::sys {
namespace {

std::mutex roots_mutex;
std::vector<std::string>& Patterns() {
  static std::vector<std::string> patterns;
  return patterns;
}
std::atomic<bool> force_walk{false};

// An error whose errno stays readable by the caller (ENOENT, ELOOP, EEXIST
// each mean something different to it).
Status Failed(const std::string& what, int err) {
  Status status = ErrnoError(what, err);
  errno = err;
  return status;
}

std::string TrimSlashes(std::string s) {
  while (s.size() > 1 && s.back() == '/') s.pop_back();
  return s;
}

// Whether path lies strictly beneath the root pattern; sets root to the
// matched host root.
bool MatchBeneath(const std::string& pattern, const std::string& path, std::string& root) {
  constexpr std::string_view kHole = "{vmid}";
  size_t hole = pattern.find(kHole);
  if (hole == std::string::npos) {
    root = pattern;
  } else {
    const std::string before = pattern.substr(0, hole);
    const std::string after = pattern.substr(hole + kHole.size());
    if (path.compare(0, before.size(), before) != 0) return false;
    size_t end = path.find('/', before.size());
    if (end == std::string::npos || end == before.size()) return false;
    root = path.substr(0, end) + after;
  }
  return path.size() > root.size() + 1 && path.compare(0, root.size(), root) == 0 && path[root.size()] == '/';
}

Result<UniqueFd> OpenRootDir(const std::string& root) {
  UniqueFd fd(::open(root.c_str(), O_PATH | O_DIRECTORY | O_CLOEXEC));
  if (!fd.valid()) return Failed("cannot open the container root " + root, errno);
  return fd;
}

// Without openat2: one component at a time, never following a link and
// never going up, so the walk cannot leave the root.
Result<UniqueFd> WalkBeneath(const ConfinedPath& where, int flags, unsigned mode) {
  Result<UniqueFd> dir = OpenRootDir(where.root);
  if (!dir.ok()) return dir.status();
  UniqueFd current = std::move(*dir);
  std::vector<std::string> parts;
  for (size_t start = 0; start <= where.rest.size();) {
    size_t end = where.rest.find('/', start);
    if (end == std::string::npos) end = where.rest.size();
    std::string part = where.rest.substr(start, end - start);
    if (part == "..") return Failed(where.root + "/" + where.rest + " goes up out of its root", EXDEV);
    if (!part.empty() && part != ".") parts.push_back(part);
    start = end + 1;
  }
  if (parts.empty()) return Failed(where.root + "/" + where.rest, EINVAL);
  for (size_t i = 0; i + 1 < parts.size(); ++i) {
    UniqueFd next(::openat(current.get(), parts[i].c_str(), O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC));
    if (!next.valid()) return Failed("cannot open " + where.root + "/" + where.rest, errno);
    current = std::move(next);
  }
  UniqueFd last(::openat(current.get(), parts.back().c_str(), flags | O_NOFOLLOW | O_CLOEXEC, static_cast<mode_t>(mode)));
  if (!last.valid()) return Failed("cannot open " + where.root + "/" + where.rest, errno);
  return last;
}

Result<UniqueFd> OpenInRoot(const ConfinedPath& where, int flags, unsigned mode) {
  if (force_walk.load()) return WalkBeneath(where, flags, mode);
  Result<UniqueFd> root = OpenRootDir(where.root);
  if (!root.ok()) return root.status();
  open_how how{};
  how.flags = static_cast<__u64>(static_cast<unsigned>(flags | O_CLOEXEC));
  how.mode = (flags & (O_CREAT | O_TMPFILE)) != 0 ? __u64{mode} : __u64{0};
  how.resolve = RESOLVE_IN_ROOT | RESOLVE_NO_MAGICLINKS;
  for (int attempt = 0; attempt < 8; ++attempt) {
    long fd = ::syscall(SYS_openat2, root->get(), where.rest.c_str(), &how, sizeof how);
    if (fd >= 0) return UniqueFd(static_cast<int>(fd));
    if (errno == EAGAIN || errno == EINTR) continue;  // a rename raced the lookup
    if (errno == ENOSYS || errno == EPERM) return WalkBeneath(where, flags, mode);  // old kernel, or seccomp
    return Failed("cannot open " + where.root + "/" + where.rest, errno);
  }
  return Failed("cannot open " + where.root + "/" + where.rest, EAGAIN);
}

}  // namespace

void AddConfinedRoot(std::string pattern) {
  pattern = TrimSlashes(std::move(pattern));
  if (pattern.empty() || pattern == "/") return;
  std::lock_guard lock(roots_mutex);
  for (const std::string& known : Patterns()) {
    if (known == pattern) return;
  }
  Patterns().push_back(std::move(pattern));
}

std::optional<ConfinedPath> FindConfinedRoot(const std::string& path) {
  std::lock_guard lock(roots_mutex);
  std::optional<ConfinedPath> best;
  for (const std::string& pattern : Patterns()) {
    std::string root;
    if (!MatchBeneath(pattern, path, root)) continue;
    if (!best || root.size() > best->root.size()) best = ConfinedPath{root, path.substr(root.size() + 1)};
  }
  return best;
}

Result<UniqueFd> OpenPath(const std::string& path, int flags, unsigned mode) {
  if (std::optional<ConfinedPath> where = FindConfinedRoot(path)) return OpenInRoot(*where, flags, mode);
  UniqueFd fd(::open(path.c_str(), flags | O_CLOEXEC, static_cast<mode_t>(mode)));
  if (!fd.valid()) return Failed("cannot open " + path, errno);
  return fd;
}

Result<ParentDir> OpenParentDir(const std::string& path) {
  std::string trimmed = TrimSlashes(path);
  size_t slash = trimmed.rfind('/');
  std::string dir = slash == std::string::npos ? "." : (slash == 0 ? "/" : trimmed.substr(0, slash));
  std::string leaf = slash == std::string::npos ? trimmed : trimmed.substr(slash + 1);
  if (leaf.empty() || leaf == "." || leaf == "..") return InvalidArgument("no file name in " + path);
  Result<UniqueFd> fd = OpenPath(dir, O_RDONLY | O_DIRECTORY);
  if (!fd.ok()) return fd.status();
  return ParentDir{std::move(*fd), std::move(leaf)};
}

void ForceConfinedWalkForTesting(bool walk) { force_walk.store(walk); }

}  // namespace gpuctl::sys
