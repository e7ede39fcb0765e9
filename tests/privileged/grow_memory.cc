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

#include "tests/privileged/memory_hog_check.h"

namespace {

bool ParsePositive(const char* text, double max, double& out) {
  char* end = nullptr;
  out = std::strtod(text, &end);
  return end != text && *end == '\0' && out > 0 && out <= max;
}

}  // namespace

int main(int argc, char** argv) {
  double rate_gib = 0, max_gib = 0;
  if (argc != 3 || !ParsePositive(argv[1], 64, rate_gib) || !ParsePositive(argv[2], 256, max_gib)) {
    std::fprintf(stderr, "usage: grow_memory GIB_PER_SECOND MAX_GIB (0 < rate <= 64, 0 < max <= 256)\n");
    return 2;
  }
  std::string where;
  if (!gpuctl::testing::InLimitedMemoryCgroup(where)) {
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
