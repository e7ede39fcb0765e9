#include "common/units.h"

#include <cmath>
#include <cstdio>
#include <string>

namespace gpuctl {
namespace {

bool IsDigitOrDot(char c) { return (c >= '0' && c <= '9') || c == '.'; }

// Reads a non-negative decimal number at the front of `text`.
bool TakeNumber(std::string_view& text, double& out) {
  size_t n = 0;
  while (n < text.size() && IsDigitOrDot(text[n])) ++n;
  if (n == 0) return false;
  std::string digits(text.substr(0, n));
  char* end = nullptr;
  out = std::strtod(digits.c_str(), &end);
  if (end != digits.c_str() + digits.size() || !std::isfinite(out)) return false;
  text.remove_prefix(n);
  return true;
}

}  // namespace

Result<std::chrono::milliseconds> ParseDuration(std::string_view text) {
  const std::string original(text);
  auto bad = [&] {
    return InvalidArgument("invalid duration '" + original +
                           "': use a number with a unit, e.g. 500ms, 2s, 1m30s");
  };
  if (text.empty()) return bad();
  double total_ms = 0;
  while (!text.empty()) {
    double value = 0;
    if (!TakeNumber(text, value)) return bad();
    size_t n = 0;
    while (n < text.size() && !IsDigitOrDot(text[n])) ++n;
    std::string_view unit = text.substr(0, n);
    text.remove_prefix(n);
    if (unit == "ms") total_ms += value;
    else if (unit == "s" || unit.empty()) total_ms += value * 1000;
    else if (unit == "m") total_ms += value * 60'000;
    else if (unit == "h") total_ms += value * 3'600'000;
    else return bad();
    if (unit.empty() && !text.empty()) return bad();
  }
  // Past ~292 million years the milliseconds leave int64: refuse, never wrap.
  if (!(total_ms < 9.2e18)) return bad();
  return std::chrono::milliseconds(static_cast<int64_t>(std::llround(total_ms)));
}

Result<uint64_t> ParseByteSize(std::string_view text) {
  const std::string original(text);
  auto bad = [&] {
    return InvalidArgument("invalid size '" + original + "': use e.g. 512MiB, 16 GiB, 4G");
  };
  while (!text.empty() && text.front() == ' ') text.remove_prefix(1);
  double value = 0;
  if (!TakeNumber(text, value)) return bad();
  while (!text.empty() && text.front() == ' ') text.remove_prefix(1);
  while (!text.empty() && text.back() == ' ') text.remove_suffix(1);
  double scale = 0;
  struct Unit { std::string_view name; double scale; };
  static constexpr Unit kUnits[] = {
      {"", 1}, {"B", 1}, {"byte", 1}, {"bytes", 1},
      {"KB", 1e3}, {"MB", 1e6}, {"GB", 1e9}, {"TB", 1e12},
      {"KiB", 1024.0}, {"MiB", 1048576.0}, {"GiB", 1073741824.0}, {"TiB", 1099511627776.0},
      {"K", 1024.0}, {"M", 1048576.0}, {"G", 1073741824.0}, {"T", 1099511627776.0},
      {"k", 1024.0}, {"m", 1048576.0}, {"g", 1073741824.0}, {"t", 1099511627776.0},
  };
  for (const Unit& u : kUnits) {
    if (text == u.name) scale = u.scale;
  }
  if (scale == 0) return bad();
  return static_cast<uint64_t>(std::llround(value * scale));
}

std::string FormatBytes(uint64_t bytes) {
  static constexpr const char* kNames[] = {"B", "KiB", "MiB", "GiB", "TiB", "PiB"};
  double v = static_cast<double>(bytes);
  size_t i = 0;
  while (v >= 1024 && i + 1 < std::size(kNames)) {
    v /= 1024;
    ++i;
  }
  char buf[32];
  if (i == 0) std::snprintf(buf, sizeof buf, "%llu B", static_cast<unsigned long long>(bytes));
  else std::snprintf(buf, sizeof buf, "%.1f %s", v, kNames[i]);
  return buf;
}

std::string FormatDuration(std::chrono::milliseconds d) {
  long long s = d.count() / 1000;
  char buf[32];
  if (s >= 3600) std::snprintf(buf, sizeof buf, "%lldh%02lldm", s / 3600, (s % 3600) / 60);
  else if (s >= 60) std::snprintf(buf, sizeof buf, "%lldm%02llds", s / 60, s % 60);
  else std::snprintf(buf, sizeof buf, "%llds", s);
  return buf;
}

}  // namespace gpuctl
