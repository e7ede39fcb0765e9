#include "tests/privileged/memory_cgroup_support.h"

#include <signal.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <sstream>
#include <thread>

namespace gpuctl::testing {

std::string OwnMemoryCgroup() {
  std::istringstream lines(ReadText("/proc/self/cgroup"));
  for (std::string line; std::getline(lines, line);) {
    size_t first = line.find(':'), second = line.find(':', first + 1);
    if (second == std::string::npos) continue;
    std::string controllers = "," + line.substr(first + 1, second - first - 1) + ",";
    if (controllers.find(",memory,") != std::string::npos) {
      std::string path = line.substr(second + 1);
      return path == "/" ? "" : path;
    }
  }
  return "";
}

uint64_t Counter(const std::string& file, const std::string& key) {
  std::istringstream in(ReadText(file));
  std::string k;
  uint64_t v = 0;
  while (in >> k >> v) {
    if (k == key) return v;
    std::string rest;
    std::getline(in, rest);  // a unit ("kB") or nothing
  }
  return 0;
}

void KillAndRemove(const std::string& dir) {
  std::error_code ec;
  if (!std::filesystem::exists(dir, ec)) return;
  for (const auto& entry : std::filesystem::directory_iterator(dir, ec)) {
    if (entry.is_directory()) KillAndRemove(entry.path().string());
  }
  for (int attempt = 0; attempt < 100 && rmdir(dir.c_str()) != 0; ++attempt) {
    std::istringstream procs(ReadText(dir + "/cgroup.procs"));
    for (pid_t pid = 0; procs >> pid;) kill(pid, SIGKILL);
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
}

}  // namespace gpuctl::testing
