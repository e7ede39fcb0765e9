#include "agents/sys/proc_status.h"

#include <charconv>

namespace gpuctl::sys {

std::vector<int64_t> ParseNsPids(std::string_view text) {
  constexpr std::string_view kKey = "NSpid:";
  size_t at = 0;
  while (at < text.size() && text.compare(at, kKey.size(), kKey) != 0) {
    size_t next = text.find('\n', at);
    if (next == std::string_view::npos) return {};
    at = next + 1;
  }
  if (at >= text.size()) return {};
  size_t end = text.find('\n', at);
  std::string_view values = text.substr(at + kKey.size(), end == std::string_view::npos ? end : end - at - kKey.size());
  std::vector<int64_t> ids;
  size_t i = 0;
  while (i < values.size()) {
    if (values[i] == ' ' || values[i] == '\t') {
      ++i;
      continue;
    }
    int64_t id = 0;
    auto [stop, err] = std::from_chars(values.data() + i, values.data() + values.size(), id);
    if (err != std::errc() || id <= 0) return {};
    if (stop != values.data() + values.size() && *stop != ' ' && *stop != '\t') return {};
    ids.push_back(id);
    i = static_cast<size_t>(stop - values.data());
  }
  return ids;
}

}  // namespace gpuctl::sys
