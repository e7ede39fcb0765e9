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
  return RemoveCgroupDir(*dir);
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
  return ReadProcsFile(*file);
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
