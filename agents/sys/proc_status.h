// /proc/<pid>/status fields, parsed apart from reading them.
#pragma once

#include <cstdint>
#include <optional>
#include <string_view>
#include <vector>

#include "common/status.h"

namespace gpuctl::sys {

// The NSpid line: the process's pid in each pid namespace it is in, from
// ours down to its own ("NSpid:\t4242\t17" is pid 17 in a container). Empty
// when the line is missing (kernels before 4.1) or malformed.
std::vector<int64_t> ParseNsPids(std::string_view status_text);

// The VmRSS line ("VmRSS:\t  123456 kB") in bytes: nullopt when there is none
// (kernel threads, zombies); kInvalidArgument when it is not "<n> kB" or the
// bytes overflow. The one VmRSS parser: the guard's scan and the agent's own
// metrics both read it here.
Result<std::optional<uint64_t>> ParseResidentBytes(std::string_view status_text);

// VmRSS (in bytes; the file says kB) and Threads; empty where the line is
// missing or malformed (a kernel thread has no VmRSS).
struct ProcessUsage {
  std::optional<uint64_t> resident_bytes;
  std::optional<uint64_t> threads;
};
ProcessUsage ParseProcessUsage(std::string_view status_text);

}  // namespace gpuctl::sys
