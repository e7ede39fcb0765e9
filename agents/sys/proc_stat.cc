#include "agents/sys/proc_stat.h"

#include <unistd.h>

#include <charconv>
#include <vector>

namespace gpuctl::sys {
namespace {

// Splits on runs of spaces (the kernel writes single spaces; a trailing
// newline is trimmed by the caller).
std::vector<std::string_view> SplitFields(std::string_view text) {
  std::vector<std::string_view> fields;
  size_t pos = 0;
  while (pos < text.size()) {
    while (pos < text.size() && text[pos] == ' ') ++pos;
    size_t end = text.find(' ', pos);
    if (end == std::string_view::npos) end = text.size();
    if (end > pos) fields.push_back(text.substr(pos, end - pos));
    pos = end;
  }
  return fields;
}

template <typename T>
bool ParseNumber(std::string_view text, T& out) {
  const char* end = text.data() + text.size();
  auto [ptr, ec] = std::from_chars(text.data(), end, out);
  return ec == std::errc() && ptr == end;
}

}  // namespace

Result<ProcStat> ParseProcStat(std::string_view text) {
  while (!text.empty() && (text.back() == '\n' || text.back() == ' ')) text.remove_suffix(1);
  const size_t open = text.find('(');
  const size_t close = text.rfind(')');
  if (open == std::string_view::npos || close == std::string_view::npos || close < open) {
    return InvalidArgument("not a /proc/PID/stat line (no '(comm)'): '" +
                           std::string(text.substr(0, 80)) + "'");
  }
  ProcStat stat;
  std::string_view pid_text = text.substr(0, open);
  while (!pid_text.empty() && pid_text.back() == ' ') pid_text.remove_suffix(1);
  if (!ParseNumber(pid_text, stat.pid)) {
    return InvalidArgument("/proc/PID/stat: bad pid '" + std::string(pid_text) + "'");
  }
  stat.comm = std::string(text.substr(open + 1, close - open - 1));

  // rest[0] is field 3 (state), so field N is rest[N - 3].
  const std::vector<std::string_view> rest = SplitFields(text.substr(close + 1));
  constexpr size_t kLastField = 24;
  if (rest.size() < kLastField - 2) {
    return InvalidArgument("/proc/PID/stat of pid " + std::to_string(stat.pid) + " has " +
                           std::to_string(rest.size() + 2) + " fields, expected at least " +
                           std::to_string(kLastField));
  }
  auto field = [&rest](size_t number) { return rest[number - 3]; };
  if (field(3).size() != 1) {
    return InvalidArgument("/proc/PID/stat: bad state '" + std::string(field(3)) + "'");
  }
  stat.state = field(3)[0];

  bool ok = ParseNumber(field(4), stat.ppid) && ParseNumber(field(5), stat.pgrp) &&
            ParseNumber(field(6), stat.session) && ParseNumber(field(9), stat.flags) &&
            ParseNumber(field(14), stat.utime_ticks) &&
            ParseNumber(field(15), stat.stime_ticks) && ParseNumber(field(20), stat.num_threads) &&
            ParseNumber(field(22), stat.start_time_ticks) &&
            ParseNumber(field(23), stat.vsize_bytes) && ParseNumber(field(24), stat.rss_pages);
  // Optional: older fixtures and hand-written lines end at rss.
  if (ok && rest.size() >= 28 - 2) {
    ok = ParseNumber(field(26), stat.start_code) && ParseNumber(field(27), stat.end_code) &&
         ParseNumber(field(28), stat.start_stack);
  }
  if (!ok) {
    return InvalidArgument("/proc/PID/stat of pid " + std::to_string(stat.pid) +
                           ": a numeric field is not a number");
  }
  return stat;
}

}  // namespace gpuctl::sys

namespace gpuctl::sys {
long ClockTicksPerSecond() {
  static const long ticks = [] {
    long t = sysconf(_SC_CLK_TCK);
    return t > 0 ? t : 100L;
  }();
  return ticks;
}

uint64_t PageBytes() {
  long bytes = sysconf(_SC_PAGESIZE);
  return bytes > 0 ? static_cast<uint64_t>(bytes) : 4096;
}
}  // namespace gpuctl::sys
