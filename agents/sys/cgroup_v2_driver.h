// CgroupDriver for the unified hierarchy (cgroup v2): memory.max,
// memory.high, memory.current, memory.events, cgroup.kill.
#pragma once

#include <string>

#include "agents/sys/cgroup_tree_driver.h"

namespace gpuctl::sys {

class CgroupV2Driver final : public CgroupTreeDriver {
 public:
  // `mount`: where cgroup2 is mounted (a fixture dir in tests). `processes`
  // sends the SIGKILLs where cgroup.kill is missing; it must outlive this.
  CgroupV2Driver(std::string mount, ProcessControl& processes, CgroupDriverOptions options = {});

  CgroupVersion version() const override { return CgroupVersion::kV2; }
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

 private:
  Result<std::string> FreezeFile(const std::string& path) const;
  // mount + path + "/" + name.
  Status WriteLimit(const std::string& path, std::string_view name, std::optional<uint64_t> bytes);
};

}  // namespace gpuctl::sys
