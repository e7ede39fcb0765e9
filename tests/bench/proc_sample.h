// What the benchmark reads about another process (the agent) from procfs.
// Parsing is apart from reading so the parsers stay pure.
#pragma once

#include <sys/types.h>

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace gpuctl::bench {

// "VmRSS:\t  12345 kB" -> 12345 for key "VmRSS"; nullopt when absent.
std::optional<uint64_t> ParseStatusKb(std::string_view status, std::string_view key);

// utime + stime (fields 14 and 15 of proc(5)) in clock ticks. The comm field
// may hold spaces and ')', so fields are counted after the last ')'.
std::optional<uint64_t> ParseStatCpuTicks(std::string_view stat);

struct ProcSample {
  uint64_t rss_kb = 0;
  uint64_t rss_anon_kb = 0;
  uint64_t rss_file_kb = 0;
  uint64_t hwm_kb = 0;  // peak RSS since start
  uint64_t threads = 0;
  uint64_t cpu_ticks = 0;
};

// Reads /proc/PID/status and /proc/PID/stat; nullopt when the process is gone.
std::optional<ProcSample> SampleProcess(pid_t pid);

// The whole of a small text file, or nullopt.
std::optional<std::string> ReadSmallFile(const std::string& path);

}  // namespace gpuctl::bench
