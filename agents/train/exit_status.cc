#include "agents/train/exit_status.h"

#include <charconv>

#include "agents/sys/files.h"
#include "common/utf8.h"

namespace gpuctl::train {

std::optional<int> ParseExitStatus(std::string_view text) {
  if (text.ends_with('\n')) text.remove_suffix(1);
  // Up to 10 digits: on a full disk the wrapper writes the status
  // zero-padded over space it set aside ("0000000007").
  if (text.empty() || text.size() > 10) return std::nullopt;
  int value = 0;
  auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (ec != std::errc() || end != text.data() + text.size() || value < 0 || value > 255) return std::nullopt;
  return value;
}

ExitStatusReading ReadExitStatus(const std::string& path) {
  Result<std::string> text = sys::ReadRegularFile(path, 64);
  if (!text.ok()) {
    if (text.status().code() == ErrorCode::kNotFound) return {};
    return {.kind = ExitStatusReading::Kind::kUnreadable, .value = 0, .why = text.status().message()};
  }
  if (std::optional<int> value = ParseExitStatus(*text)) {
    return {.kind = ExitStatusReading::Kind::kValue, .value = *value, .why = ""};
  }
  std::string shown = SanitizeUtf8(text->substr(0, 32));
  return {.kind = ExitStatusReading::Kind::kUnreadable, .value = 0,
          .why = path + " holds '" + shown + "', not an exit status"};
}

}  // namespace gpuctl::train
