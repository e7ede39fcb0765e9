// Pure parsers for kernel text files. Reading is HostFs's job; these take the
// text so tests can feed real captures and literals.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "common/status.h"

namespace gpuctl::sys {

// /proc/meminfo: every "Key:   N kB" line, values in bytes. Lines without a
// unit (HugePages_Total) are kept as plain numbers. Errors: kInvalidArgument
// when MemTotal is missing (not a meminfo file).
struct Meminfo {
  std::map<std::string, uint64_t, std::less<>> values;
  uint64_t Get(std::string_view key) const;  // 0 when absent
  uint64_t mem_total_bytes() const { return Get("MemTotal"); }
  // MemAvailable; on kernels before 3.14 estimated as MemFree+Buffers+Cached.
  uint64_t mem_available_bytes() const;
  uint64_t swap_total_bytes() const { return Get("SwapTotal"); }
  uint64_t swap_free_bytes() const { return Get("SwapFree"); }
};
Result<Meminfo> ParseMeminfo(std::string_view text);

// /proc/pressure/<res> and cgroup v2 <res>.pressure:
//   some avg10=0.00 avg60=0.00 avg300=0.00 total=0
//   full avg10=0.00 avg60=0.00 avg300=0.00 total=0
// `full` is absent for cpu on older kernels. Unknown keys are ignored.
struct PressureLine {
  double avg10 = 0, avg60 = 0, avg300 = 0;
  uint64_t total_us = 0;
};
struct Pressure {
  PressureLine some;
  std::optional<PressureLine> full;
};
Result<Pressure> ParsePressure(std::string_view text);

// /proc/<pid>/cgroup: "hierarchy-ID:controller-list:cgroup-path" per line.
// v2's unified entry is "0::/path" (empty controller list).
struct CgroupEntry {
  int hierarchy_id = 0;
  std::vector<std::string> controllers;  // "name=systemd" kept as is
  std::string path;
};
Result<std::vector<CgroupEntry>> ParseProcCgroup(std::string_view text);

// os-release: KEY=value lines, values optionally quoted with ' or " and
// backslash escapes inside double quotes; comments and blanks skipped.
std::map<std::string, std::string> ParseOsRelease(std::string_view text);

// /proc/loadavg: "0.52 0.58 0.59 1/467 12345".
struct LoadAverage {
  double load1 = 0, load5 = 0, load15 = 0;
};
Result<LoadAverage> ParseLoadavg(std::string_view text);

// /proc/uptime: "350735.47 234388.90" -> seconds since boot.
Result<double> ParseUptime(std::string_view text);

// A CPU list as in Cpus_allowed_list or cpuset.cpus: "0-3,8,10-11" -> count.
Result<uint32_t> CountCpuList(std::string_view text);

// The value of "Key:\tvalue" in /proc/<pid>/status, trimmed; nullopt when absent.
std::optional<std::string> FindStatusField(std::string_view status_text, std::string_view key);

}  // namespace gpuctl::sys
