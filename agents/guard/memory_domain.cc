#include "agents/guard/memory_domain.h"

#include <algorithm>
#include <utility>

namespace gpuctl::guard {
namespace {

std::optional<double> FullAvg10(const std::optional<sys::Pressure>& pressure) {
  if (!pressure || !pressure->full) return std::nullopt;
  return pressure->full->avg10;
}

}  // namespace

DomainReading HostReading(const sys::Meminfo& meminfo, const std::optional<sys::Pressure>& pressure) {
  return DomainReading{meminfo.mem_total_bytes(), meminfo.mem_available_bytes(), FullAvg10(pressure), std::nullopt};
}

DomainReading CgroupReading(const CgroupMemory& cgroup, const DomainReading& host,
                            const std::optional<sys::Pressure>& pressure) {
  if (!cgroup.limit_bytes) return DomainReading{host.total_bytes, host.available_bytes, FullAvg10(pressure), std::nullopt};
  uint64_t working_set = cgroup.usage_bytes - std::min(cgroup.reclaimable_file_bytes, cgroup.usage_bytes);
  uint64_t limit = *cgroup.limit_bytes;
  uint64_t headroom = limit > working_set ? limit - working_set : 0;
  return DomainReading{limit, std::min(headroom, host.available_bytes), FullAvg10(pressure), cgroup.usage_bytes};
}

MemoryDomainReader::MemoryDomainReader(GuardDomain domain, const sys::HostFs& fs, sys::CgroupDriver* cgroups)
    : domain_(std::move(domain)), fs_(fs), cgroups_(cgroups) {}

Result<DomainReading> MemoryDomainReader::Read() const {
  Result<sys::Meminfo> meminfo = fs_.ReadMeminfo();
  if (!meminfo.ok()) return meminfo.status();
  if (domain_.kind == GuardDomain::Kind::kHost) return HostReading(*meminfo, fs_.ReadMemoryPressure());

  if (cgroups_ == nullptr) {
    return FailedPrecondition("guard domain " + FormatGuardDomain(domain_) + " needs a cgroup driver");
  }
  DomainReading host = HostReading(*meminfo, std::nullopt);
  const std::string& path = domain_.cgroup;
  Result<std::optional<uint64_t>> limit = cgroups_->MemoryLimit(path);
  if (!limit.ok()) return limit.status().Wrap("reading guard domain " + path);
  Result<uint64_t> usage = cgroups_->MemoryCurrent(path);
  if (!usage.ok()) return usage.status().Wrap("reading guard domain " + path);
  // Without the figure, count no cache as reclaimable: the guard is then
  // early rather than late.
  uint64_t reclaimable = cgroups_->ReclaimableFile(path).value_or(0);
  // v1 has no per-cgroup PSI; the host's stalls are not the domain's.
  Result<sys::Pressure> pressure = cgroups_->MemoryPressure(path);
  std::optional<sys::Pressure> psi;
  if (pressure.ok()) psi = *pressure;
  return CgroupReading(CgroupMemory{*limit, *usage, reclaimable}, host, psi);
}

}  // namespace gpuctl::guard
