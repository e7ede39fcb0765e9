#include "agents/sys/gpu_types.h"

#include <cstdio>

namespace gpuctl::sys {

std::vector<std::string> DecodeClockEventReasons(uint64_t mask) {
  static constexpr struct {
    uint64_t bit;
    const char* word;
  } kReasons[] = {
      {0x1, "gpu_idle"},
      {0x2, "applications_clocks_setting"},
      {0x4, "sw_power_cap"},
      {0x8, "hw_slowdown"},
      {0x10, "sync_boost"},
      {0x20, "sw_thermal_slowdown"},
      {0x40, "hw_thermal_slowdown"},
      {0x80, "hw_power_brake_slowdown"},
      {0x100, "display_clocks_setting"},
  };
  std::vector<std::string> words;
  uint64_t known = 0;
  for (const auto& r : kReasons) {
    known |= r.bit;
    if (mask & r.bit) words.emplace_back(r.word);
  }
  if (uint64_t unknown = mask & ~known) {
    char buf[24];
    std::snprintf(buf, sizeof buf, "0x%llx", static_cast<unsigned long long>(unknown));
    words.emplace_back(buf);
  }
  return words;
}

}  // namespace gpuctl::sys
