// CgroupDriver for the unified hierarchy (cgroup v2): memory.max,
// memory.high, memory.current, memory.events, cgroup.kill.
#pragma once

#include <string>

#include "agents/sys/cgroup_driver.h"

namespace gpuctl::sys {

class CgroupV2Driver final : public CgroupDriver {
 public:
  // `mount`: where cgroup2 is mounted (a fixture dir in tests). `processes`
  // sends the SIGKILLs where cgroup.kill is missing; it must outlive this.
  CgroupV2Driver(std::string mount, ProcessControl& processes, CgroupDriverOptions options = {});

  CgroupVersion version() const override { return CgroupVersion::kV2; }
  Result<std::string> Directory(const std::string& path) const override;
  Status CreateCgroup(const std::string& path) override;
  Status RemoveCgroup(const std::string& path) override;
  Status AddProcess(const std::string& path, int64_t pid) override;
  Status SetMemoryMax(const std::string& path, std::optional<uint64_t> bytes) override;
  Status SetMemoryHigh(const std::string& path, std::optional<uint64_t> bytes) override;
  Result<uint64_t> MemoryCurrent(const std::string& path) override;
  Result<std::optional<uint64_t>> MemoryLimit(const std::string& path) override;
  Result<uint64_t> InactiveFile(const std::string& path) override;
  Result<Pressure> MemoryPressure(const std::string& path) override;
  Result<std::vector<int64_t>> Processes(const std::string& path) override;
  Result<uint64_t> OomKillCount(const std::string& path) override;
  Status KillAll(const std::string& path) override;

 private:
  // mount + path + "/" + name.
  Result<std::string> File(const std::string& path, std::string_view name) const;
  Status WriteLimit(const std::string& path, std::string_view name, std::optional<uint64_t> bytes);

  std::string mount_;
  ProcessControl& processes_;
  CgroupDriverOptions options_;
};

}  // namespace gpuctl::sys
