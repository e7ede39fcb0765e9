#include "agents/sys/proc_tree.h"

#include <unistd.h>

#include <algorithm>
#include <charconv>
#include <filesystem>
#include <string>
#include <system_error>

#include "agents/sys/cgroup_io.h"

namespace gpuctl::sys {

Result<std::vector<int64_t>> ListPids(const HostFs& fs) {
  std::error_code ec;
  std::filesystem::directory_iterator it(fs.Path("proc"), ec);
  if (ec) return CgroupErrno("cannot list " + fs.Path("proc"), ec.value());
  std::vector<int64_t> pids;
  // Entries vanish while we iterate (processes exit); an error mid-way ends
  // the scan with what was seen, which is all a snapshot of /proc can be.
  for (; !ec && it != std::filesystem::directory_iterator(); it.increment(ec)) {
    const std::string name = it->path().filename().string();
    int64_t pid = 0;
    auto [end, err] = std::from_chars(name.data(), name.data() + name.size(), pid);
    if (err == std::errc() && end == name.data() + name.size() && pid > 0) pids.push_back(pid);
  }
  std::sort(pids.begin(), pids.end());
  return pids;
}

bool HasExecutable(const HostFs& fs, int64_t pid) {
  const std::string link = fs.Path("proc/" + std::to_string(pid) + "/exe");
  char target[1];
  return ::readlink(link.c_str(), target, sizeof target) >= 0;
}

}  // namespace gpuctl::sys
