// The kernel's /proc text as the agent reads it (a container's /proc, or a
// process naming itself anything, can put odd bytes there): meminfo,
// pressure (PSI), /proc/PID/cgroup, /proc/PID/stat, /proc/PID/status,
// loadavg, uptime, CPU lists, os-release, and the mountinfo and sched lines
// where_running reads, each over the same input.
// Invariants: what the contracts promise of an accepted file.
#include "agents/sys/proc_parsers.h"
#include "agents/sys/proc_stat.h"
#include "agents/sys/where_running.h"
#include "tests/fuzz/fuzz_check.h"

using namespace gpuctl;
using namespace gpuctl::sys;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string_view text = fuzz::AsText(data, size);
  if (Result<Meminfo> meminfo = ParseMeminfo(text); meminfo.ok()) {
    FUZZ_CHECK(meminfo->values.contains("MemTotal"));
    (void)meminfo->mem_available_bytes();
  }
  (void)ParsePressure(text);
  if (Result<std::vector<CgroupEntry>> cgroups = ParseProcCgroup(text); cgroups.ok()) {
    FUZZ_CHECK(cgroups->size() <= size);
  }
  if (Result<ProcStat> stat = ParseProcStat(text); stat.ok()) {
    FUZZ_CHECK(stat->comm.size() < size);
  }
  for (std::string_view key : {"VmRSS", "Cpus_allowed_list", "PPid"}) (void)FindStatusField(text, key);
  (void)ParseLoadavg(text);
  (void)ParseUptime(text);
  (void)CountCpuList(text);
  (void)ParseOsRelease(text);
  FUZZ_CHECK(RootFsType(text).size() <= size);
  if (std::optional<long> pid = SchedPid(text)) FUZZ_CHECK(*pid >= 0);
  return 0;
}
