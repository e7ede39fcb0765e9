#include "agents/sys/proc_status.h"

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

ProcessUsage ParseProcessUsage(std::string_view status_text) {
  ProcessUsage usage;
  for (std::string_view line : Lines(status_text)) {
    std::vector<std::string_view> words = Words(line);
    if (words.size() == 3 && words[0] == "VmRSS:" && words[2] == "kB") {
      if (auto kb = ToNumber<uint64_t>(words[1]); kb && *kb <= UINT64_MAX / 1024) usage.resident_bytes = *kb * 1024;
    } else if (words.size() == 2 && words[0] == "Threads:") {
      usage.threads = ToNumber<uint64_t>(words[1]);
    }
  }
  return usage;
}

}  // namespace gpuctl::sys
