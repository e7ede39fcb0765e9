// The rule for the tests' memory hogs: they only ever run inside a memory
// cgroup with a hard limit (their own or an ancestor's), and check that
// before they allocate a byte.
#pragma once

#include <cstdlib>
#include <fstream>
#include <string>

namespace gpuctl::testing {

inline bool ReadFirstLine(const std::string& path, std::string& out) {
  std::ifstream in(path);
  return static_cast<bool>(std::getline(in, out));
}

// Whether this process's memory cgroup, or one above it, has a hard limit;
// `where` names it.
inline bool InLimitedMemoryCgroup(std::string& where) {
  std::ifstream cgroups("/proc/self/cgroup");
  for (std::string line; std::getline(cgroups, line);) {
    std::string path = line.substr(line.rfind(':') + 1);
    bool v2 = line.rfind("0::", 0) == 0;
    bool v1_memory = line.find(":memory:") != std::string::npos;
    if (!v2 && !v1_memory) continue;
    std::string root = v2 ? "/sys/fs/cgroup" : "/sys/fs/cgroup/memory";
    for (std::string at = path; !at.empty(); at = at.substr(0, at.rfind('/'))) {
      std::string limit;
      if (!ReadFirstLine(root + at + (v2 ? "/memory.max" : "/memory.limit_in_bytes"), limit)) continue;
      bool unlimited = v2 ? limit == "max" : std::strtoull(limit.c_str(), nullptr, 10) >= (1ull << 62);
      if (!unlimited) {
        where = root + at + " (limit " + limit + ")";
        return true;
      }
    }
  }
  return false;
}

}  // namespace gpuctl::testing
