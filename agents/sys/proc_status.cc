#include "agents/sys/proc_status.h"

#include <string>

#include "agents/sys/text_fields.h"

namespace gpuctl::sys {

std::vector<int64_t> ParseNsPids(std::string_view text) {
  constexpr std::string_view kKey = "NSpid:";
  for (std::string_view line : Lines(text)) {
    if (line.substr(0, kKey.size()) != kKey) continue;
    std::vector<int64_t> ids;
    for (std::string_view word : Words(line.substr(kKey.size()))) {
      std::optional<int64_t> id = ToNumber<int64_t>(word);
      if (!id || *id <= 0) return {};
      ids.push_back(*id);
    }
    return ids;
  }
  return {};
}

Result<std::optional<uint64_t>> ParseResidentBytes(std::string_view status_text) {
  for (std::string_view line : Lines(status_text)) {
    std::vector<std::string_view> words = Words(line);
    if (words.empty() || words[0] != "VmRSS:") continue;
    std::optional<uint64_t> kib = words.size() == 3 && words[2] == "kB" ? ToNumber<uint64_t>(words[1]) : std::nullopt;
    if (!kib || *kib > UINT64_MAX / 1024) {
      return InvalidArgument("malformed VmRSS '" + std::string(Trim(line.substr(words[0].size()))) + "'");
    }
    return std::optional<uint64_t>(*kib * 1024);
  }
  return std::optional<uint64_t>();
}

ProcessUsage ParseProcessUsage(std::string_view status_text) {
  ProcessUsage usage;
  if (Result<std::optional<uint64_t>> rss = ParseResidentBytes(status_text); rss.ok()) usage.resident_bytes = *rss;
  for (std::string_view line : Lines(status_text)) {
    std::vector<std::string_view> words = Words(line);
    if (words.size() == 2 && words[0] == "Threads:") {
      usage.threads = ToNumber<uint64_t>(words[1]);
    }
  }
  return usage;
}

}  // namespace gpuctl::sys
