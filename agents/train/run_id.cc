#include "agents/train/run_id.h"

#include <cstdio>
#include <ctime>
#include <random>

namespace gpuctl::train {

std::string NewRunId(std::chrono::system_clock::time_point now) {
  std::time_t seconds = std::chrono::system_clock::to_time_t(now);
  std::tm utc{};
  gmtime_r(&seconds, &utc);
  static thread_local std::mt19937 random{std::random_device{}()};
  char text[96];
  std::snprintf(text, sizeof text, "%04d%02d%02d-%02d%02d%02d-%08x", utc.tm_year + 1900, utc.tm_mon + 1, utc.tm_mday,
                utc.tm_hour, utc.tm_min, utc.tm_sec, static_cast<unsigned>(random()));
  return text;
}

}  // namespace gpuctl::train
