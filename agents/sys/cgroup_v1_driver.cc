#include "agents/sys/cgroup_v1_driver.h"

#include <utility>

#include "agents/sys/cgroup_io.h"
#include "agents/sys/cgroup_kill.h"
#include "agents/sys/cgroup_parsers.h"

namespace gpuctl::sys {

CgroupV1Driver::CgroupV1Driver(std::string mount, ProcessControl& processes, CgroupDriverOptions options)
    : CgroupTreeDriver(std::move(mount), processes, options) {}

Status CgroupV1Driver::CreateCgroup(const std::string& path) {
  Result<std::string> dir = CheckParentExists(path);
  if (!dir.ok()) return dir.status();
  return MakeCgroupDir(*dir);
}

Status CgroupV1Driver::SetMemoryMax(const std::string& path, std::optional<uint64_t> bytes) {
  Result<std::string> file = File(path, "memory.limit_in_bytes");
  if (!file.ok()) return file.status();
  // The kernel rounds the limit up to whole pages; -1 means no limit.
  Status s = WriteControlFile(*file, bytes ? std::to_string(*bytes) : std::string("-1"));
  if (s.code() == ErrorCode::kFailedPrecondition) {
    return FailedPrecondition(s.message() + " (the cgroup uses more than that and the kernel could not reclaim enough)");
  }
  if (s.code() == ErrorCode::kInvalidArgument) {
    return InvalidArgument(s.message() + " (v1 refuses a limit above memory.memsw.limit_in_bytes)");
  }
  return s;
}

Status CgroupV1Driver::SetMemoryHigh(const std::string& path, std::optional<uint64_t>) {
  return FailedPrecondition("cgroup v1 has no memory.high (cgroup " + path + "); only the hard limit is available");
}

Result<uint64_t> CgroupV1Driver::MemoryCurrent(const std::string& path) {
  Result<std::string> file = File(path, "memory.usage_in_bytes");
  if (!file.ok()) return file.status();
  return ReadNumberFile(*file);
}

Result<std::optional<uint64_t>> CgroupV1Driver::MemoryLimit(const std::string& path) {
  Result<std::string> file = File(path, "memory.limit_in_bytes");
  if (!file.ok()) return file.status();
  Result<uint64_t> limit = ReadNumberFile(*file);
  if (!limit.ok()) return limit.status();
  if (IsV1Unlimited(*limit)) return std::optional<uint64_t>();
  return std::optional<uint64_t>(*limit);
}

Result<uint64_t> CgroupV1Driver::ReclaimableFile(const std::string& path) {
  Result<std::string> file = File(path, "memory.stat");
  if (!file.ok()) return file.status();
  Result<FlatKeyed> stat = ReadKeyedFile(*file);
  if (!stat.ok()) return stat.status();
  // total_* counts the cgroup and its descendants, like usage_in_bytes does
  // under use_hierarchy (the only mode since Linux 5.x); the plain keys are
  // this cgroup's own pages only.
  return ReclaimableFileFrom(*stat, "total_active_file", "total_inactive_file", "total_dirty", "total_writeback",
                             *file);
}

Result<Pressure> CgroupV1Driver::MemoryPressure(const std::string& path) {
  return FailedPrecondition("cgroup v1 has no per-cgroup memory pressure (cgroup " + path +
                            "); read the host's /proc/pressure/memory instead");
}

Result<uint64_t> CgroupV1Driver::OomKillCount(const std::string& path) {
  return ReadOomKillCount(path, "memory.oom_control", "the kernel is older than 4.13 and does not count OOM kills");
}

Status CgroupV1Driver::KillAll(const std::string& path) {
  Result<std::string> dir = Directory(path);
  if (!dir.ok()) return dir.status();
  ListProcesses list = [this, &path] { return Processes(path); };
  return KillUntilEmpty(list, processes_, KillMode::kSignal, options_.kill_timeout, "cgroup " + *dir);
}

// v1's freezer is a hierarchy of its own (freezer.state), apart from the
// memory cgroup a job lives in; callers pause with SIGSTOP here.
Status CgroupV1Driver::CreateSubgroup(const std::string& path) {
  return FailedPrecondition("cgroup v1: no pause groups for " + path + " (its freezer is another hierarchy)");
}

Status CgroupV1Driver::SetFrozen(const std::string& path, bool /*frozen*/) {
  return FailedPrecondition("cgroup v1: cannot freeze " + path + " (its freezer is another hierarchy)");
}

Result<bool> CgroupV1Driver::Frozen(const std::string& path) {
  return FailedPrecondition("cgroup v1: no frozen state for " + path + " (its freezer is another hierarchy)");
}

}  // namespace gpuctl::sys
