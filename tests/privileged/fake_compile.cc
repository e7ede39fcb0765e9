// A compile whose memory a test controls, for the build governor's tests:
// grows to PEAK_MIB over SECONDS (touching every page), then writes OUTPUT
// (and lines to $FAKE_COMPILE_LOG when set: "start T", "peak T" when it
// holds all its memory, "end T" a quarter second later, so a test can see how
// many were at their peak at once) and exits. Run through a link named
// like a compiler (cc), so the governor takes it for one.
//   cc PEAK_MIB SECONDS OUTPUT SOURCE
// A memory hog is only ever run inside a memory cgroup with a hard limit: it
// checks that, and its arguments, before it allocates a byte (exit 2).
#include <sys/mman.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <string>
#include <thread>

#include "tests/privileged/memory_hog_check.h"

namespace {

bool ParsePositive(const char* text, double max, double& out) {
  char* end = nullptr;
  out = std::strtod(text, &end);
  return end != text && *end == '\0' && out > 0 && out <= max;
}

double Now() {
  return std::chrono::duration<double>(std::chrono::system_clock::now().time_since_epoch()).count();
}

void Log(const char* what) {
  const char* path = std::getenv("FAKE_COMPILE_LOG");
  if (path == nullptr) return;
  FILE* f = std::fopen(path, "a");
  if (f == nullptr) return;
  std::fprintf(f, "%s %.6f\n", what, Now());
  std::fclose(f);
}

}  // namespace

int main(int argc, char** argv) {
  double peak_mib = 0, seconds = 0;
  if (argc != 5 || !ParsePositive(argv[1], 8192, peak_mib) || !ParsePositive(argv[2], 600, seconds)) {
    std::fprintf(stderr, "usage: cc PEAK_MIB SECONDS OUTPUT SOURCE (0 < peak <= 8192, 0 < seconds <= 600)\n");
    return 2;
  }
  std::string where;
  if (!gpuctl::testing::InLimitedMemoryCgroup(where)) {
    std::fprintf(stderr, "fake_compile: refusing to run outside a memory cgroup with a hard limit\n");
    return 2;
  }
  Log("start");
  const size_t chunk = 8u << 20;
  const int chunks = static_cast<int>(peak_mib / 8);
  auto start = std::chrono::steady_clock::now();
  for (int i = 1; i <= chunks; ++i) {
    void* p = mmap(nullptr, chunk, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (p == MAP_FAILED) return 1;
    std::memset(p, 1, chunk);
    std::this_thread::sleep_until(start + std::chrono::duration<double>(seconds * i / chunks));
  }
  Log("peak");
  std::this_thread::sleep_for(std::chrono::milliseconds(250));
  std::ofstream(argv[3]) << "object of " << argv[4] << "\n";
  Log("end");
  return 0;
}
