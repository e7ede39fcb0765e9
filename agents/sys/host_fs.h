// Reads the host's kernel files under an injectable root ("/" for real,
// a temp dir for tests, like oomd's Fs). This is the only place that names
// /proc and /sys paths.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "agents/sys/proc_parsers.h"
#include "common/status.h"

namespace gpuctl::sys {

enum class CgroupVersion { kUnknown, kV1, kV2, kHybrid };

const char* CgroupVersionName(CgroupVersion v);  // "1", "2", "hybrid", "unknown"

class HostFs {
 public:
  explicit HostFs(std::string root = "/");

  const std::string& root() const { return root_; }
  // root + relative ("proc/meminfo" -> "/proc/meminfo").
  std::string Path(std::string_view relative) const;
  // Whole file as text. Errors: kNotFound, kPermissionDenied, kIo.
  Result<std::string> ReadFile(std::string_view relative) const;
  // Anything at root + relative (a file, a directory, a socket); links followed.
  bool Exists(std::string_view relative) const;

  Result<Meminfo> ReadMeminfo() const;
  // nullopt when the kernel has no PSI (file absent, or EOPNOTSUPP when
  // booted with psi=0).
  std::optional<Pressure> ReadMemoryPressure() const;
  Result<LoadAverage> ReadLoadavg() const;
  Result<double> ReadUptime() const;
  std::string ReadHostname() const;   // proc/sys/kernel/hostname
  std::string ReadKernelRelease() const;  // proc/sys/kernel/osrelease
  // PRETTY_NAME from etc/os-release, falling back to usr/lib/os-release.
  std::string ReadOsPrettyName() const;
  // CPUs this process may use (proc/self/status Cpus_allowed_list).
  uint32_t ReadCpuCount() const;
  Result<std::vector<CgroupEntry>> ReadSelfCgroup() const;

  // v2: sys/fs/cgroup/cgroup.controllers exists; hybrid: v1 controllers plus
  // sys/fs/cgroup/unified; v1: controller directories under sys/fs/cgroup.
  CgroupVersion DetectCgroupVersion() const;
  // Container, VM or bare metal: agents/sys/where_running.h, not here.

 private:
  std::string root_;
};

}  // namespace gpuctl::sys
