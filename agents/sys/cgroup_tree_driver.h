// What the v1 and v2 drivers share: a cgroup is a directory under a mount,
// created under an existing parent, joined through cgroup.procs. Each version
// adds its own memory files on top.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "agents/sys/cgroup_driver.h"

namespace gpuctl::sys {

class CgroupTreeDriver : public CgroupDriver {
 public:
  Result<std::string> Directory(const std::string& path) const override;
  Status RemoveCgroup(const std::string& path) override;
  Status AddProcess(const std::string& path, int64_t pid) override;
  Result<std::vector<int64_t>> Processes(const std::string& path) override;
  Result<std::vector<std::string>> Children(const std::string& path) override;

 protected:
  // `processes` sends the SIGKILLs of KillAll; it must outlive this.
  CgroupTreeDriver(std::string mount, ProcessControl& processes, CgroupDriverOptions options);

  Result<std::string> File(const std::string& path, std::string_view name) const;
  // The new cgroup's directory, once its parent is known to exist.
  Result<std::string> CheckParentExists(const std::string& path) const;
  // The "oom_kill" count of a flat keyed file (v1 memory.oom_control, v2 memory.events).
  Result<uint64_t> ReadOomKillCount(const std::string& path, std::string_view file_name, std::string_view missing_why);

  ProcessControl& processes_;
  CgroupDriverOptions options_;

 private:
  std::string mount_;
};

}  // namespace gpuctl::sys
