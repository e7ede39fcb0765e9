// A runaway job for the guard's tests and benchmark: allocates and touches
// memory at a steady rate until killed.
//   grow_memory GIB_PER_SECOND [MAX_GIB]
#include <sys/mman.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <thread>

int main(int argc, char** argv) {
  double rate_gib = argc > 1 ? std::atof(argv[1]) : 1.0;
  double max_gib = argc > 2 ? std::atof(argv[2]) : 1024.0;
  const size_t chunk = 8u << 20;  // 8 MiB steps keep the rate smooth
  const double chunk_gib = static_cast<double>(chunk) / (1u << 30);
  auto start = std::chrono::steady_clock::now();
  double grown = 0;
  std::printf("grow_memory: %.2f GiB/s\n", rate_gib);
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
