#include "agents/sys/remove_tree.h"

#include <dirent.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <vector>

#include "agents/sys/confined_root.h"

namespace gpuctl::sys {
namespace {

void Keep(Status& first, Status s) {
  if (first.ok() && !s.ok()) first = std::move(s);
}

std::vector<std::string> Names(int dir_fd) {
  std::vector<std::string> names;
  int own = ::dup(dir_fd);  // closedir closes its descriptor; dir_fd stays ours
  DIR* dir = own < 0 ? nullptr : ::fdopendir(own);
  if (dir == nullptr) {
    if (own >= 0) ::close(own);
    return names;
  }
  while (const dirent* entry = ::readdir(dir)) {
    std::string name = entry->d_name;
    if (name != "." && name != "..") names.push_back(std::move(name));
  }
  ::closedir(dir);
  return names;
}

// Removes `name` in `parent`, what it holds first when it is a directory
// (checked without following: a link is removed as a link). `shown` names
// it in errors.
Status RemoveAt(int parent, const std::string& name, const std::string& shown) {
  struct stat st {};
  if (::fstatat(parent, name.c_str(), &st, AT_SYMLINK_NOFOLLOW) != 0) {
    return errno == ENOENT ? Status::Ok() : ErrnoError("cannot remove " + shown, errno);
  }
  Status first;
  int flags = 0;
  if (S_ISDIR(st.st_mode)) {
    flags = AT_REMOVEDIR;
    UniqueFd dir(::openat(parent, name.c_str(), O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC));
    if (!dir.valid()) return ErrnoError("cannot open " + shown, errno);
    for (const std::string& child : Names(dir.get())) Keep(first, RemoveAt(dir.get(), child, shown + "/" + child));
  }
  if (::unlinkat(parent, name.c_str(), flags) != 0 && errno != ENOENT) {
    Keep(first, ErrnoError("cannot remove " + shown, errno));
  }
  return first;
}

}  // namespace

Status RemoveTree(const std::string& path) {
  Result<ParentDir> parent = OpenParentDir(path);
  if (!parent.ok()) return parent.status().code() == ErrorCode::kNotFound ? Status::Ok() : parent.status();
  return RemoveAt(parent->fd.get(), parent->leaf, path);
}

}  // namespace gpuctl::sys
