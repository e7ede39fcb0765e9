#include "agents/sys/cgroup_parsers.h"

#include <charconv>

#include "agents/sys/text_fields.h"

namespace gpuctl::sys {
namespace {

template <typename Fn>
Status ForEachLine(std::string_view text, Fn&& fn) {
  while (!text.empty()) {
    size_t nl = text.find('\n');
    Status s = fn(text.substr(0, nl));
    if (!s.ok()) return s;
    if (nl == std::string_view::npos) break;
    text.remove_prefix(nl + 1);
  }
  return Status::Ok();
}

}  // namespace

Result<uint64_t> ParseCgroupNumber(std::string_view text) {
  std::optional<uint64_t> n = ToNumber<uint64_t>(Trim(text));
  if (!n) return InvalidArgument("expected a number, got '" + std::string(Trim(text)) + "'");
  return *n;
}

Result<std::optional<uint64_t>> ParseCgroupMax(std::string_view text) {
  if (Trim(text) == "max") return std::optional<uint64_t>();
  Result<uint64_t> n = ParseCgroupNumber(text);
  if (!n.ok()) return InvalidArgument("expected a number or 'max', got '" + std::string(Trim(text)) + "'");
  return std::optional<uint64_t>(*n);
}

bool IsV1Unlimited(uint64_t limit_in_bytes) { return limit_in_bytes >= (uint64_t{1} << 62); }

Result<std::vector<int64_t>> ParseCgroupProcs(std::string_view text) {
  std::vector<int64_t> pids;
  Status s = ForEachLine(text, [&](std::string_view line) {
    line = Trim(line);
    if (line.empty()) return Status::Ok();
    std::optional<int64_t> pid = ToNumber<int64_t>(line);
    if (!pid || *pid <= 0) return InvalidArgument("malformed cgroup.procs line '" + std::string(line) + "'");
    pids.push_back(*pid);
    return Status::Ok();
  });
  if (!s.ok()) return s;
  return pids;
}

Result<FlatKeyed> ParseFlatKeyed(std::string_view text) {
  FlatKeyed values;
  Status s = ForEachLine(text, [&](std::string_view line) {
    std::vector<std::string_view> words = Words(line);
    if (words.empty()) return Status::Ok();
    std::optional<uint64_t> value = words.size() == 2 ? ToNumber<uint64_t>(words[1]) : std::nullopt;
    if (!value) return InvalidArgument("malformed 'key value' line '" + std::string(Trim(line)) + "'");
    values[std::string(words[0])] = *value;
    return Status::Ok();
  });
  if (!s.ok()) return s;
  return values;
}

bool ControllerListHas(std::string_view list, std::string_view controller) {
  for (std::string_view word : Words(list)) {
    if (word == controller) return true;
  }
  return false;
}

Result<uint64_t> ReclaimableFileFrom(const FlatKeyed& stat, std::string_view active, std::string_view inactive,
                                     std::string_view dirty, std::string_view writeback, const std::string& source) {
  auto value = [&](std::string_view key) -> std::optional<uint64_t> {
    auto it = stat.find(key);
    if (it == stat.end()) return std::nullopt;
    return it->second;
  };
  std::optional<uint64_t> a = value(active), i = value(inactive);
  if (!a || !i) return NotFound(source + " has no " + std::string(a ? inactive : active));
  // Capped, not wrapped: figures near 2^64 (a corrupt or made-up file) must
  // not add up to a small one.
  auto sum = [](uint64_t x, uint64_t y) { return x > UINT64_MAX - y ? UINT64_MAX : x + y; };
  uint64_t file = sum(*a, *i);
  uint64_t busy = sum(value(dirty).value_or(0), value(writeback).value_or(0));
  return file > busy ? file - busy : 0;
}

std::string StripCgroupMount(std::string_view path, std::string_view mount) {
  while (mount.size() > 1 && mount.back() == '/') mount.remove_suffix(1);
  if (mount.empty() || mount == "/" || !path.starts_with(mount)) return std::string(path);
  std::string_view rest = path.substr(mount.size());
  if (rest.empty()) return "/";
  if (rest.front() != '/') return std::string(path);  // /sys/fs/cgroup/memoryX is not under .../memory
  return std::string(rest);
}

}  // namespace gpuctl::sys
