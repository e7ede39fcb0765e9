#include "tests/bench/proc_sample.h"

#include <charconv>
#include <fstream>
#include <sstream>

namespace gpuctl::bench {
namespace {

std::optional<uint64_t> ParseU64(std::string_view text) {
  uint64_t value = 0;
  auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (ec != std::errc() || end == text.data()) return std::nullopt;
  return value;
}

std::string_view TrimLeft(std::string_view s) {
  while (!s.empty() && (s.front() == ' ' || s.front() == '\t')) s.remove_prefix(1);
  return s;
}

}  // namespace

std::optional<uint64_t> ParseStatusKb(std::string_view status, std::string_view key) {
  while (!status.empty()) {
    size_t eol = status.find('\n');
    std::string_view line = status.substr(0, eol);
    status = eol == std::string_view::npos ? std::string_view() : status.substr(eol + 1);
    if (line.size() > key.size() && line.substr(0, key.size()) == key && line[key.size()] == ':') {
      return ParseU64(TrimLeft(line.substr(key.size() + 1)));
    }
  }
  return std::nullopt;
}

std::optional<uint64_t> ParseStatCpuTicks(std::string_view stat) {
  size_t close = stat.rfind(')');
  if (close == std::string_view::npos) return std::nullopt;
  // After ") " comes field 3 (state); utime is field 14, stime field 15.
  std::istringstream in{std::string(stat.substr(close + 1))};
  std::string field;
  uint64_t utime = 0, stime = 0;
  for (int n = 3; n <= 15 && in >> field; ++n) {
    if (n == 14 || n == 15) {
      std::optional<uint64_t> v = ParseU64(field);
      if (!v) return std::nullopt;
      (n == 14 ? utime : stime) = *v;
      if (n == 15) return utime + stime;
    }
  }
  return std::nullopt;
}

std::optional<std::string> ReadSmallFile(const std::string& path) {
  std::ifstream in(path);
  if (!in) return std::nullopt;
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

std::optional<ProcSample> SampleProcess(pid_t pid) {
  std::string dir = "/proc/" + std::to_string(pid);
  std::optional<std::string> status = ReadSmallFile(dir + "/status");
  std::optional<std::string> stat = ReadSmallFile(dir + "/stat");
  if (!status || !stat) return std::nullopt;
  std::optional<uint64_t> rss = ParseStatusKb(*status, "VmRSS");
  std::optional<uint64_t> ticks = ParseStatCpuTicks(*stat);
  if (!rss || !ticks) return std::nullopt;  // a zombie has no VmRSS
  ProcSample s;
  s.rss_kb = *rss;
  s.cpu_ticks = *ticks;
  s.rss_anon_kb = ParseStatusKb(*status, "RssAnon").value_or(0);
  s.rss_file_kb = ParseStatusKb(*status, "RssFile").value_or(0);
  s.hwm_kb = ParseStatusKb(*status, "VmHWM").value_or(0);
  s.threads = ParseStatusKb(*status, "Threads").value_or(0);
  return s;
}

}  // namespace gpuctl::bench
