#include "agents/sys/nvidia_smi_refusal.h"

#include <algorithm>

#include "agents/sys/text_fields.h"

namespace gpuctl::sys {

std::optional<std::string> RefusedQueryField(std::string_view output) {
  constexpr std::string_view kOpen = "Field \"";
  constexpr std::string_view kRest = "\" is not a valid field to query";
  for (std::string_view line : Lines(output)) {
    line = Trim(line);
    if (!line.starts_with(kOpen)) continue;
    line.remove_prefix(kOpen.size());
    size_t close = line.find('"');
    if (close == 0 || close == std::string_view::npos || !line.substr(close).starts_with(kRest)) continue;
    return std::string(line.substr(0, close));
  }
  return std::nullopt;
}

bool RefusesOption(std::string_view output, std::string_view option) {
  constexpr std::string_view kOpen = "ERROR: Option ";
  constexpr std::string_view kRest = " is not recognized.";
  for (std::string_view line : Lines(output)) {
    line = Trim(line);
    if (!line.starts_with(kOpen)) continue;
    line.remove_prefix(kOpen.size());
    size_t end = line.find(kRest);
    if (end == std::string_view::npos) continue;
    std::string_view given = line.substr(0, end);  // "--query-remapped-rows=a,b" or "-x"
    if (given == option || given.substr(0, given.find('=')) == option) return true;
  }
  return false;
}

bool DropRefusedField(std::vector<std::string>& fields, std::string_view refused) {
  auto it = std::find(fields.begin(), fields.end(), refused);
  if (it == fields.end()) return false;
  if (refused == "clocks_event_reasons.active") {
    *it = "clocks_throttle_reasons.active";
    return true;
  }
  if (refused == "retired_pages.pending") {
    fields.erase(it);
    return true;
  }
  return false;
}

}  // namespace gpuctl::sys
