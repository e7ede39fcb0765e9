// CgroupDriver for the v1 memory controller: memory.limit_in_bytes,
// memory.usage_in_bytes, memory.oom_control, and a SIGKILL loop over
// cgroup.procs (v1 has no cgroup.kill and no memory.high).
#pragma once

#include <string>

#include "agents/sys/cgroup_tree_driver.h"

namespace gpuctl::sys {

class CgroupV1Driver final : public CgroupTreeDriver {
 public:
  // `mount`: where the memory controller is mounted (normally
  // /sys/fs/cgroup/memory; a fixture dir in tests). `processes` sends the
  // SIGKILLs of KillAll; it must outlive this.
  CgroupV1Driver(std::string mount, ProcessControl& processes, CgroupDriverOptions options = {});

  CgroupVersion version() const override { return CgroupVersion::kV1; }
  Status CreateCgroup(const std::string& path) override;
  Status SetMemoryMax(const std::string& path, std::optional<uint64_t> bytes) override;
  Status SetMemoryHigh(const std::string& path, std::optional<uint64_t> bytes) override;
  Result<uint64_t> MemoryCurrent(const std::string& path) override;
  Result<std::optional<uint64_t>> MemoryLimit(const std::string& path) override;
  Result<uint64_t> ReclaimableFile(const std::string& path) override;
  Result<Pressure> MemoryPressure(const std::string& path) override;
  Result<uint64_t> OomKillCount(const std::string& path) override;
  Status KillAll(const std::string& path) override;
  Status CreateSubgroup(const std::string& path) override;
  Status SetFrozen(const std::string& path, bool frozen) override;
  Result<bool> Frozen(const std::string& path) override;
};

}  // namespace gpuctl::sys
