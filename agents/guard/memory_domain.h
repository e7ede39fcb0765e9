// How much memory the guard's domain has left, as one DomainReading: pure
// functions over parsed figures, and a thin reader that gathers them.
//
// Cgroup domains count reclaimable file cache as available, as the host's
// MemAvailable does. The kernel charges page cache to the cgroup (v2
// memory.current and v1 memory.usage_in_bytes both include it), but it
// reclaims clean cache, active or inactive, before it OOM-kills, so a cgroup
// full of cache is not in danger: a job whose own memory fits is never
// killed for the cache of old logs it reread. Dirty and writeback pages are
// not counted (they must be written first), nor is shmem (anon LRU).
#pragma once

#include <cstdint>
#include <optional>

#include "agents/guard/guard_config.h"
#include "agents/sys/cgroup_driver.h"
#include "agents/sys/host_fs.h"
#include "agents/sys/proc_parsers.h"
#include "common/status.h"

namespace gpuctl::guard {

struct DomainReading {
  uint64_t total_bytes = 0;      // MemTotal, or the cgroup's limit
  uint64_t available_bytes = 0;  // what may still be allocated before trouble
  // PSI memory "full" avg10 in percent; nullopt where the kernel has no PSI
  // for the domain (no PSI, or a v1 cgroup).
  std::optional<double> psi_full_avg10;
  // A cgroup domain with a limit: its memory.usage_in_bytes / memory.current,
  // cache included (the unit a v1 usage threshold counts in). nullopt otherwise.
  std::optional<uint64_t> usage_bytes;
};

// The host: MemTotal and MemAvailable.
DomainReading HostReading(const sys::Meminfo& meminfo, const std::optional<sys::Pressure>& pressure);

struct CgroupMemory {
  std::optional<uint64_t> limit_bytes;  // nullopt: no limit
  uint64_t usage_bytes = 0;
  uint64_t reclaimable_file_bytes = 0;
};

// A cgroup: available = limit - (usage - reclaimable file), and never more than
// the host has available (a cgroup whose limit exceeds what the host has
// free runs out with the host). Without a limit the cgroup is bounded by the
// host alone: the host's total and available. `host` is HostReading's.
DomainReading CgroupReading(const CgroupMemory& cgroup, const DomainReading& host,
                            const std::optional<sys::Pressure>& pressure);

// Reads the figures of one domain. `cgroups` may be null for a host domain.
class MemoryDomainReader {
 public:
  MemoryDomainReader(GuardDomain domain, const sys::HostFs& fs, sys::CgroupDriver* cgroups);

  // Errors: the HostFs errors reading proc/meminfo; for a cgroup domain
  // kFailedPrecondition when no driver was given, and the driver's errors
  // (kNotFound: the domain's cgroup does not exist, or no longer).
  Result<DomainReading> Read() const;

 private:
  GuardDomain domain_;
  const sys::HostFs& fs_;
  sys::CgroupDriver* cgroups_;
};

}  // namespace gpuctl::guard
