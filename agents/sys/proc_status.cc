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

}  // namespace gpuctl::sys
