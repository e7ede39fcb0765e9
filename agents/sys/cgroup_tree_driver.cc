#include "agents/sys/cgroup_tree_driver.h"

#include <utility>

#include "agents/sys/cgroup_io.h"
#include "agents/sys/cgroup_parsers.h"

namespace gpuctl::sys {

CgroupTreeDriver::CgroupTreeDriver(std::string mount, ProcessControl& processes, CgroupDriverOptions options)
    : processes_(processes), options_(options), mount_(std::move(mount)) {}

Result<std::string> CgroupTreeDriver::Directory(const std::string& path) const {
  return JoinCgroupPath(mount_, path);
}

Result<std::string> CgroupTreeDriver::File(const std::string& path, std::string_view name) const {
  Result<std::string> dir = Directory(path);
  if (!dir.ok()) return dir.status();
  return *dir + "/" + std::string(name);
}

Result<std::string> CgroupTreeDriver::CheckParentExists(const std::string& path) const {
  Result<std::string> dir = Directory(path);
  if (!dir.ok()) return dir.status();
  Result<std::string> parent = ParentCgroupPath(path);
  if (!parent.ok()) return parent.status();
  Result<std::string> parent_dir = Directory(*parent);
  if (!parent_dir.ok()) return parent_dir.status();
  if (!ControlFileExists(*parent_dir)) return NotFound("parent cgroup " + *parent_dir + " does not exist");
  return dir;
}

Status CgroupTreeDriver::RemoveCgroup(const std::string& path) {
  Result<std::string> dir = Directory(path);
  if (!dir.ok()) return dir.status();
  // Children first: an rmdir of a cgroup with children fails (EBUSY), and
  // one with processes fails on its own, so what is in use stays.
  if (path != "/") {
    Result<std::vector<std::string>> children = Children(path);
    if (children.ok()) {
      for (const std::string& child : *children) {
        if (Status s = RemoveCgroup(child); !s.ok()) return s;
      }
    }
  }
  return RemoveCgroupDir(*dir);
}

Result<std::vector<std::string>> CgroupTreeDriver::Children(const std::string& path) {
  Result<std::string> dir = Directory(path);
  if (!dir.ok()) return dir.status();
  Result<std::vector<std::string>> names = ChildCgroupNames(*dir);
  if (!names.ok()) return names.status();
  std::vector<std::string> children;
  for (const std::string& name : *names) children.push_back((path == "/" ? "" : path) + "/" + name);
  return children;
}

Status CgroupTreeDriver::AddProcess(const std::string& path, int64_t pid) {
  if (pid <= 0) return InvalidArgument("cannot add pid " + std::to_string(pid) + " to a cgroup");
  Result<std::string> file = File(path, "cgroup.procs");
  if (!file.ok()) return file.status();
  return WriteControlFile(*file, std::to_string(pid));
}

Result<std::vector<int64_t>> CgroupTreeDriver::Processes(const std::string& path) {
  Result<std::string> file = File(path, "cgroup.procs");
  if (!file.ok()) return file.status();
  Result<std::vector<int64_t>> pids = ReadProcsFile(*file);
  if (!pids.ok() || path == "/") return pids;  // the root's children are every other cgroup
  Result<std::vector<std::string>> children = Children(path);
  if (!children.ok()) return pids;  // listed as the parent goes: its own pids are the answer
  for (const std::string& child : *children) {
    Result<std::vector<int64_t>> more = Processes(child);
    // A child gone between the listing and the read had no processes left;
    // one that cannot be read is an error, never "empty" (KillAll would
    // take a frozen compile for dead).
    if (!more.ok() && more.status().code() == ErrorCode::kNotFound) continue;
    if (!more.ok()) return more.status();
    pids->insert(pids->end(), more->begin(), more->end());
  }
  return pids;
}

Result<uint64_t> CgroupTreeDriver::ReadOomKillCount(const std::string& path, std::string_view file_name,
                                                    std::string_view missing_why) {
  Result<std::string> file = File(path, file_name);
  if (!file.ok()) return file.status();
  Result<FlatKeyed> keyed = ReadKeyedFile(*file);
  if (!keyed.ok()) return keyed.status();
  auto it = keyed->find("oom_kill");
  if (it == keyed->end()) return FailedPrecondition(*file + " has no oom_kill: " + std::string(missing_why));
  return it->second;
}

}  // namespace gpuctl::sys
