// A runaway job for the guard's tests and benchmark: allocates and touches
// memory at a steady rate until killed.
//   grow_memory GIB_PER_SECOND MAX_GIB
// A memory hog is only ever run inside a memory cgroup with a hard limit
// (its own or an ancestor's): it checks that, and its arguments, before it
// allocates a byte, and refuses with exit 2 otherwise.
#include <sys/mman.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <sstream>
#include <string>
#include <thread>

namespace {

bool ParsePositive(const char* text, double max, double& out) {
  char* end = nullptr;
  out = std::strtod(text, &end);
  return end != text && *end == '\0' && out > 0 && out <= max;
}

bool ReadLine(const std::string& path, std::string& out) {
  std::ifstream in(path);
  return static_cast<bool>(std::getline(in, out));
}

// Whether this process's memory cgroup, or one above it, has a hard limit.
bool InLimitedMemoryCgroup(std::string& where) {
  std::ifstream cgroups("/proc/self/cgroup");
  for (std::string line; std::getline(cgroups, line);) {
    std::string path = line.substr(line.rfind(':') + 1);
    bool v2 = line.rfind("0::", 0) == 0;
    bool v1_memory = line.find(":memory:") != std::string::npos;
    if (!v2 && !v1_memory) continue;
    std::string root = v2 ? "/sys/fs/cgroup" : "/sys/fs/cgroup/memory";
    for (std::string at = path; !at.empty(); at = at.substr(0, at.rfind('/'))) {
      std::string limit;
      if (!ReadLine(root + at + (v2 ? "/memory.max" : "/memory.limit_in_bytes"), limit)) continue;
      bool unlimited = v2 ? limit == "max" : std::strtoull(limit.c_str(), nullptr, 10) >= (1ull << 62);
      if (!unlimited) {
        where = root + at + " (limit " + limit + ")";
        return true;
      }
    }
  }
  return false;
}

}  // namespace

int main(int argc, char** argv) {
  double rate_gib = 0, max_gib = 0;
  if (argc != 3 || !ParsePositive(argv[1], 64, rate_gib) || !ParsePositive(argv[2], 256, max_gib)) {
    std::fprintf(stderr, "usage: grow_memory GIB_PER_SECOND MAX_GIB (0 < rate <= 64, 0 < max <= 256)\n");
    return 2;
  }
  std::string where;
  if (!InLimitedMemoryCgroup(where)) {
    std::fprintf(stderr, "grow_memory: refusing to run outside a memory cgroup with a hard limit\n");
    return 2;
  }
  const size_t chunk = 8u << 20;  // 8 MiB steps keep the rate smooth
  const double chunk_gib = static_cast<double>(chunk) / (1u << 30);
  auto start = std::chrono::steady_clock::now();
  double grown = 0;
  std::printf("grow_memory: %.2f GiB/s up to %.2f GiB in %s\n", rate_gib, max_gib, where.c_str());
  std::fflush(stdout);
  while (grown < max_gib) {
    void* p = mmap(nullptr, chunk, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (p == MAP_FAILED) return 1;
    std::memset(p, 1, chunk);  // touch: resident, not just reserved
    grown += chunk_gib;
    auto due = start + std::chrono::duration<double>(grown / rate_gib);
    std::this_thread::sleep_until(due);
  }
  std::printf("grow_memory: reached %.2f GiB\n", grown);
  return 0;
}
