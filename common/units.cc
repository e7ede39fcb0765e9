#include "common/units.h"

#include <charconv>
#include <cmath>
#include <cstdint>
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
  auto too_large = [&] {
    return InvalidArgument("size '" + original + "' is too large: at most 8 EiB (" + std::to_string(INT64_MAX) +
                           " bytes)");
  };
  while (!text.empty() && text.front() == ' ') text.remove_prefix(1);
  size_t digits = 0;
  while (digits < text.size() && IsDigitOrDot(text[digits])) ++digits;
  const std::string_view number = text.substr(0, digits);
  double value = 0;
  if (!TakeNumber(text, value)) return bad();
  while (!text.empty() && text.front() == ' ') text.remove_prefix(1);
  while (!text.empty() && text.back() == ' ') text.remove_suffix(1);
  struct Unit { std::string_view name; uint64_t scale; };
  static constexpr Unit kUnits[] = {
      {"", 1}, {"B", 1}, {"byte", 1}, {"bytes", 1},
      {"KB", 1'000}, {"MB", 1'000'000}, {"GB", 1'000'000'000}, {"TB", 1'000'000'000'000},
      {"KiB", 1ull << 10}, {"MiB", 1ull << 20}, {"GiB", 1ull << 30}, {"TiB", 1ull << 40},
      {"K", 1ull << 10}, {"M", 1ull << 20}, {"G", 1ull << 30}, {"T", 1ull << 40},
      {"k", 1ull << 10}, {"m", 1ull << 20}, {"g", 1ull << 30}, {"t", 1ull << 40},
  };
  uint64_t scale = 0;
  for (const Unit& u : kUnits) {
    if (text == u.name) scale = u.scale;
  }
  if (scale == 0) return bad();
  // At most INT64_MAX bytes: the figure travels as int64 to JSON readers
  // and the client, and no memory is larger. Past it the text states no
  // usable figure, so it is refused rather than wrapped or saturated.
  constexpr uint64_t kMaxBytes = INT64_MAX;
  if (number.find('.') == std::string_view::npos) {
    // Whole numbers exactly: a double would round INT64_MAX itself up to 2^63.
    uint64_t whole = 0;
    auto [end, ec] = std::from_chars(number.data(), number.data() + number.size(), whole);
    uint64_t bytes = 0;
    if (ec != std::errc() || end != number.data() + number.size() || __builtin_mul_overflow(whole, scale, &bytes) ||
        bytes > kMaxBytes) {
      return too_large();
    }
    return bytes;
  }
  const double bytes = std::round(value * static_cast<double>(scale));
  if (!(bytes < 0x1p63)) return too_large();  // 2^63, the first double past INT64_MAX
  return static_cast<uint64_t>(bytes);
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
