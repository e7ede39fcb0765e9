#include "agents/sys/cgroup_v2_driver.h"

#include <filesystem>
#include <utility>

#include "agents/sys/cgroup_io.h"
#include "agents/sys/cgroup_kill.h"
#include "agents/sys/cgroup_parsers.h"

namespace gpuctl::sys {

CgroupV2Driver::CgroupV2Driver(std::string mount, ProcessControl& processes, CgroupDriverOptions options)
    : CgroupTreeDriver(std::move(mount), processes, options) {}

Status CgroupV2Driver::CreateCgroup(const std::string& path) {
  Result<std::string> dir = CheckParentExists(path);
  if (!dir.ok()) return dir.status();
  if (ControlFileExists(*dir)) return Status(ErrorCode::kAlreadyExists, "cgroup " + *dir + " exists");
  const std::string parent_dir = std::filesystem::path(*dir).parent_path().string();
  // Delegate memory to the parent's children before creating this one, so the
  // new cgroup is born with memory.max. Reading first keeps the common case
  // (already delegated) free of writes.
  const std::string subtree = parent_dir + "/cgroup.subtree_control";
  Result<std::string> controllers = ReadControlFile(subtree);
  if (!controllers.ok()) return controllers.status();
  if (!ControllerListHas(*controllers, "memory")) {
    Status s = WriteControlFile(subtree, "+memory");
    if (s.code() == ErrorCode::kFailedPrecondition) {
      return FailedPrecondition("cannot enable the memory controller in " + parent_dir +
                                ": it has processes of its own, and cgroup v2 gives controllers to "
                                "children only of cgroups without processes; use another parent");
    }
    if (!s.ok()) return s;
  }
  return MakeCgroupDir(*dir);
}

Status CgroupV2Driver::WriteLimit(const std::string& path, std::string_view name, std::optional<uint64_t> bytes) {
  Result<std::string> file = File(path, name);
  if (!file.ok()) return file.status();
  return WriteControlFile(*file, bytes ? std::to_string(*bytes) : std::string("max"));
}

Status CgroupV2Driver::SetMemoryMax(const std::string& path, std::optional<uint64_t> bytes) {
  return WriteLimit(path, "memory.max", bytes);
}

Status CgroupV2Driver::SetMemoryHigh(const std::string& path, std::optional<uint64_t> bytes) {
  return WriteLimit(path, "memory.high", bytes);
}

Result<uint64_t> CgroupV2Driver::MemoryCurrent(const std::string& path) {
  Result<std::string> file = File(path, "memory.current");
  if (!file.ok()) return file.status();
  return ReadNumberFile(*file);
}

Result<std::optional<uint64_t>> CgroupV2Driver::MemoryLimit(const std::string& path) {
  Result<std::string> file = File(path, "memory.max");
  if (!file.ok()) return file.status();
  Result<std::string> text = ReadControlFile(*file);
  if (!text.ok()) return text.status();
  Result<std::optional<uint64_t>> limit = ParseCgroupMax(*text);
  if (!limit.ok()) return limit.status().Wrap(*file);
  return limit;
}

Result<uint64_t> CgroupV2Driver::ReclaimableFile(const std::string& path) {
  Result<std::string> file = File(path, "memory.stat");
  if (!file.ok()) return file.status();
  Result<FlatKeyed> stat = ReadKeyedFile(*file);
  if (!stat.ok()) return stat.status();
  return ReclaimableFileFrom(*stat, "active_file", "inactive_file", "file_dirty", "file_writeback", *file);
}

Result<Pressure> CgroupV2Driver::MemoryPressure(const std::string& path) {
  Result<std::string> file = File(path, "memory.pressure");
  if (!file.ok()) return file.status();
  Result<std::string> text = ReadControlFile(*file);
  if (!text.ok()) return text.status();
  Result<Pressure> pressure = ParsePressure(*text);
  if (!pressure.ok()) return pressure.status().Wrap(*file);
  return pressure;
}

Result<uint64_t> CgroupV2Driver::OomKillCount(const std::string& path) {
  return ReadOomKillCount(path, "memory.events", "this kernel does not count OOM kills");
}

Status CgroupV2Driver::KillAll(const std::string& path) {
  Result<std::string> dir = Directory(path);
  if (!dir.ok()) return dir.status();
  const std::string kill_file = *dir + "/cgroup.kill";
  ListProcesses list = [this, &path] { return Processes(path); };
  if (ControlFileExists(kill_file)) {
    // The kernel kills the whole subtree and catches forks itself; we only
    // wait for the processes to go.
    Status s = WriteControlFile(kill_file, "1");
    if (!s.ok()) return s;
    return KillUntilEmpty(list, processes_, KillMode::kWaitOnly, options_.kill_timeout, "cgroup " + *dir);
  }
  return KillUntilEmpty(list, processes_, KillMode::kSignal, options_.kill_timeout, "cgroup " + *dir);
}

Status CgroupV2Driver::CreateSubgroup(const std::string& path) {
  Result<std::string> dir = CheckParentExists(path);
  if (!dir.ok()) return dir.status();
  if (ControlFileExists(*dir)) return Status(ErrorCode::kAlreadyExists, "cgroup " + *dir + " exists");
  // No write to the parent's cgroup.subtree_control: a controller there
  // would be refused while the parent has processes of its own, and the
  // child needs none to be frozen.
  return MakeCgroupDir(*dir);
}

// The freezer's file of an existing cgroup; kFailedPrecondition where the
// kernel has none.
Result<std::string> CgroupV2Driver::FreezeFile(const std::string& path) const {
  Result<std::string> file = File(path, "cgroup.freeze");
  if (!file.ok()) return file.status();
  if (ControlFileExists(*file)) return file;
  Result<std::string> procs = File(path, "cgroup.procs");
  if (!ControlFileExists(*procs)) return NotFound("no cgroup " + path);
  return FailedPrecondition(*file + " is missing: this kernel has no cgroup v2 freezer (Linux 5.2+)");
}

Status CgroupV2Driver::SetFrozen(const std::string& path, bool frozen) {
  Result<std::string> file = FreezeFile(path);
  if (!file.ok()) return file.status();
  return WriteControlFile(*file, frozen ? "1" : "0");
}

Result<bool> CgroupV2Driver::Frozen(const std::string& path) {
  Result<std::string> file = FreezeFile(path);
  if (!file.ok()) return file.status();
  Result<uint64_t> value = ReadNumberFile(*file);
  if (!value.ok()) return value.status();
  return *value != 0;
}

}  // namespace gpuctl::sys
