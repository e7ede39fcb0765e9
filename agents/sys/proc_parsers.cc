#include "agents/sys/proc_parsers.h"

#include <charconv>
#include <cmath>
#include <limits>

#include "agents/sys/text_fields.h"

namespace gpuctl::sys {
namespace {

// Kernel figures are never negative; refusing "-1" catches garbage early.
std::optional<double> ToNonNegativeDouble(std::string_view s) {
  std::optional<double> v = ToNumber<double>(s);
  if (!v || !std::isfinite(*v) || *v < 0) return std::nullopt;
  return v;
}

Status Malformed(std::string_view what, std::string_view line) {
  return InvalidArgument("malformed " + std::string(what) + " line '" + std::string(line) + "'");
}

// "avg10=0.00 avg60=0.00 avg300=0.00 total=0" (words after some/full). All
// four keys are required; keys a later kernel may add are ignored.
std::optional<PressureLine> ParsePressureFields(const std::vector<std::string_view>& words) {
  std::map<std::string_view, std::string_view> fields;
  for (size_t i = 1; i < words.size(); ++i) {
    size_t eq = words[i].find('=');
    if (eq == std::string_view::npos) return std::nullopt;
    fields[words[i].substr(0, eq)] = words[i].substr(eq + 1);
  }
  auto field = [&](std::string_view key) -> std::string_view {
    auto it = fields.find(key);
    return it == fields.end() ? std::string_view() : it->second;
  };
  std::optional<double> avg10 = ToNonNegativeDouble(field("avg10"));
  std::optional<double> avg60 = ToNonNegativeDouble(field("avg60"));
  std::optional<double> avg300 = ToNonNegativeDouble(field("avg300"));
  std::optional<uint64_t> total = ToNumber<uint64_t>(field("total"));
  if (!avg10 || !avg60 || !avg300 || !total) return std::nullopt;
  return PressureLine{*avg10, *avg60, *avg300, *total};
}

// One shell-style word as os-release allows it: '...' literal, "..." with
// \" \\ \$ \` escapes, bare backslash escapes; an unquoted blank or '#' ends it.
std::optional<std::string> ParseShellWord(std::string_view s) {
  std::string out;
  char quote = 0;
  for (size_t i = 0; i < s.size(); ++i) {
    char c = s[i];
    if (quote == '\'') {
      if (c == '\'') quote = 0; else out += c;
    } else if (quote == '"') {
      if (c == '"') {
        quote = 0;
      } else if (c == '\\' && i + 1 < s.size() &&
                 std::string_view("\"\\$`").find(s[i + 1]) != std::string_view::npos) {
        out += s[++i];
      } else {
        out += c;
      }
    } else if (c == '\'' || c == '"') {
      quote = c;
    } else if (c == '\\' && i + 1 < s.size()) {
      out += s[++i];
    } else if (kSpaces.find(c) != std::string_view::npos || c == '#') {
      break;
    } else {
      out += c;
    }
  }
  if (quote != 0) return std::nullopt;  // unterminated: refuse rather than guess
  return out;
}

bool IsEnvName(std::string_view key) {
  if (key.empty() || (key[0] >= '0' && key[0] <= '9')) return false;
  for (char c : key) {
    bool ok = (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '_';
    if (!ok) return false;
  }
  return true;
}

}  // namespace

uint64_t Meminfo::Get(std::string_view key) const {
  auto it = values.find(key);
  return it == values.end() ? 0 : it->second;
}

uint64_t Meminfo::mem_available_bytes() const {
  if (values.contains("MemAvailable")) return Get("MemAvailable");
  // Pre-3.14 kernels: the estimate free(1) used before MemAvailable existed.
  return Get("MemFree") + Get("Buffers") + Get("Cached");
}

Result<Meminfo> ParseMeminfo(std::string_view text) {
  Meminfo info;
  for (std::string_view line : Lines(text)) {
    if (Trim(line).empty()) continue;
    size_t colon = line.find(':');
    if (colon == std::string_view::npos) return Malformed("meminfo", line);
    std::string_view key = Trim(line.substr(0, colon));
    std::vector<std::string_view> words = Words(line.substr(colon + 1));
    std::optional<uint64_t> value = words.empty() ? std::nullopt : ToNumber<uint64_t>(words[0]);
    if (key.empty() || !value || words.size() > 2) return Malformed("meminfo", line);
    if (words.size() == 2) {
      // The kernel prints only "kB" (meaning KiB); any other unit is not meminfo.
      if (words[1] != "kB" || *value > std::numeric_limits<uint64_t>::max() / 1024) {
        return Malformed("meminfo", line);
      }
      *value *= 1024;
    }
    info.values[std::string(key)] = *value;
  }
  if (!info.values.contains("MemTotal")) {
    return InvalidArgument("not a meminfo file: no MemTotal line");
  }
  return info;
}

Result<Pressure> ParsePressure(std::string_view text) {
  std::optional<PressureLine> some;
  std::optional<PressureLine> full;
  for (std::string_view line : Lines(text)) {
    std::vector<std::string_view> words = Words(line);
    if (words.empty()) continue;
    std::optional<PressureLine>* slot = words[0] == "some" ? &some : words[0] == "full" ? &full : nullptr;
    if (slot == nullptr) return Malformed("pressure", line);
    *slot = ParsePressureFields(words);
    if (!*slot) return Malformed("pressure", line);
  }
  if (!some) return InvalidArgument("not a pressure file: no 'some' line");
  return Pressure{*some, full};
}

Result<std::vector<CgroupEntry>> ParseProcCgroup(std::string_view text) {
  std::vector<CgroupEntry> entries;
  for (std::string_view raw : Lines(text)) {
    std::string_view line = Trim(raw);
    if (line.empty()) continue;
    // The path is last and may itself contain ':', so split at the first two.
    size_t first = line.find(':');
    size_t second = first == std::string_view::npos ? first : line.find(':', first + 1);
    if (second == std::string_view::npos) return Malformed("cgroup", line);
    std::optional<int> id = ToNumber<int>(line.substr(0, first));
    std::string_view path = line.substr(second + 1);
    if (!id || *id < 0 || path.empty() || path[0] != '/') return Malformed("cgroup", line);
    CgroupEntry entry;
    entry.hierarchy_id = *id;
    entry.path = std::string(path);
    std::string_view list = line.substr(first + 1, second - first - 1);
    while (!list.empty()) {
      size_t comma = list.find(',');
      std::string_view name = list.substr(0, comma);
      if (name.empty()) return Malformed("cgroup", line);
      entry.controllers.emplace_back(name);
      if (comma == std::string_view::npos) break;
      list.remove_prefix(comma + 1);
    }
    entries.push_back(std::move(entry));
  }
  if (entries.empty()) return InvalidArgument("empty cgroup file: no hierarchy lines");
  return entries;
}

std::map<std::string, std::string> ParseOsRelease(std::string_view text) {
  // Like systemd, lines that do not fit KEY=value are skipped, not fatal: one
  // bad line in a vendor file must not cost us the OS name.
  std::map<std::string, std::string> fields;
  for (std::string_view raw : Lines(text)) {
    std::string_view line = Trim(raw);
    if (line.empty() || line[0] == '#') continue;
    size_t eq = line.find('=');
    if (eq == std::string_view::npos) continue;
    std::string_view key = Trim(line.substr(0, eq));
    std::optional<std::string> value = ParseShellWord(Trim(line.substr(eq + 1)));
    if (!IsEnvName(key) || !value) continue;
    fields[std::string(key)] = std::move(*value);
  }
  return fields;
}

Result<LoadAverage> ParseLoadavg(std::string_view text) {
  std::vector<std::string_view> words = Words(text);
  if (words.size() < 3) return Malformed("loadavg", Trim(text));
  std::optional<double> l1 = ToNonNegativeDouble(words[0]);
  std::optional<double> l5 = ToNonNegativeDouble(words[1]);
  std::optional<double> l15 = ToNonNegativeDouble(words[2]);
  if (!l1 || !l5 || !l15) return Malformed("loadavg", Trim(text));
  return LoadAverage{*l1, *l5, *l15};
}

Result<double> ParseUptime(std::string_view text) {
  std::vector<std::string_view> words = Words(text);
  std::optional<double> up = words.empty() ? std::nullopt : ToNonNegativeDouble(words[0]);
  if (!up || words.size() > 2 || (words.size() == 2 && !ToNonNegativeDouble(words[1]))) {
    return Malformed("uptime", Trim(text));
  }
  return *up;
}

Result<uint32_t> CountCpuList(std::string_view text) {
  auto bad = [&] { return InvalidArgument("malformed CPU list '" + std::string(Trim(text)) + "'"); };
  std::string_view list = Trim(text);
  uint64_t count = 0;
  while (!list.empty()) {
    size_t comma = list.find(',');
    std::string_view item = Trim(list.substr(0, comma));
    size_t dash = item.find('-');
    std::optional<uint32_t> lo = ToNumber<uint32_t>(Trim(item.substr(0, dash)));
    std::optional<uint32_t> hi = dash == std::string_view::npos
                                     ? lo
                                     : ToNumber<uint32_t>(Trim(item.substr(dash + 1)));
    if (!lo || !hi || *hi < *lo) return bad();
    count += uint64_t{*hi} - *lo + 1;
    if (comma == std::string_view::npos) break;
    list.remove_prefix(comma + 1);
    if (list.empty()) return bad();  // trailing comma
  }
  if (count > std::numeric_limits<uint32_t>::max()) return bad();
  return static_cast<uint32_t>(count);
}

std::optional<std::string> FindStatusField(std::string_view status_text, std::string_view key) {
  for (std::string_view line : Lines(status_text)) {
    size_t colon = line.find(':');
    if (colon == std::string_view::npos || Trim(line.substr(0, colon)) != key) continue;
    return std::string(Trim(line.substr(colon + 1)));
  }
  return std::nullopt;
}

}  // namespace gpuctl::sys
