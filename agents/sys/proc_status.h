// /proc/<pid>/status fields, parsed apart from reading them.
#pragma once

#include <cstdint>
#include <optional>
#include <string_view>
#include <vector>

namespace gpuctl::sys {

// The NSpid line: the process's pid in each pid namespace it is in, from
// ours down to its own ("NSpid:\t4242\t17" is pid 17 in a container). Empty
// when the line is missing (kernels before 4.1) or malformed.
std::vector<int64_t> ParseNsPids(std::string_view status_text);

// VmRSS (in bytes; the file says kB) and Threads; empty where the line is
// missing or malformed (a kernel thread has no VmRSS).
struct ProcessUsage {
  std::optional<uint64_t> resident_bytes;
  std::optional<uint64_t> threads;
};
ProcessUsage ParseProcessUsage(std::string_view status_text);

}  // namespace gpuctl::sys
