#include "agents/train/log_line.h"

#include <limits>

namespace gpuctl::train {
namespace {

bool IsBlank(char c) { return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f' || c == '\v'; }

}  // namespace

std::string_view TrimTrailingBlanks(std::string_view text) {
  while (!text.empty() && IsBlank(text.back())) text.remove_suffix(1);
  return text;
}

std::string_view TrimBlanks(std::string_view text) {
  while (!text.empty() && IsBlank(text.front())) text.remove_prefix(1);
  return TrimTrailingBlanks(text);
}

std::optional<uint64_t> DigitsAt(std::string_view text, size_t pos, size_t* end) {
  uint64_t value = 0;
  size_t i = pos;
  constexpr uint64_t kMax = std::numeric_limits<uint64_t>::max();
  while (i < text.size() && text[i] >= '0' && text[i] <= '9') {
    auto digit = static_cast<uint64_t>(text[i] - '0');
    if (value > (kMax - digit) / 10) return std::nullopt;
    value = value * 10 + digit;
    ++i;
  }
  if (i == pos) return std::nullopt;
  if (end != nullptr) *end = i;
  return value;
}

RankedLine SplitRankPrefix(std::string_view line) {
  RankedLine out{std::nullopt, TrimTrailingBlanks(line)};
  for (std::string_view tag : {std::string_view("[rank"), std::string_view("[default")}) {
    if (!out.body.starts_with(tag)) continue;
    size_t end = 0;
    auto rank = DigitsAt(out.body, tag.size(), &end);
    if (!rank || *rank > static_cast<uint64_t>(std::numeric_limits<int>::max())) break;
    if (out.body.substr(end, 2) != "]:") break;
    out.rank = static_cast<int>(*rank);
    out.body.remove_prefix(end + 2);
    // torch's elastic launcher writes "[rank0]: " + line: one blank is the
    // separator, the rest (a traceback frame's indent) belongs to the line.
    if (!out.body.empty() && out.body.front() == ' ') out.body.remove_prefix(1);
    break;
  }
  return out;
}

bool IsDottedIdentifier(std::string_view text) {
  bool at_start = true;  // of the whole name or of one dotted part
  for (char c : text) {
    bool letter = (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || c == '_';
    bool digit = c >= '0' && c <= '9';
    if (c == '.') {
      if (at_start) return false;
      at_start = true;
    } else if (letter || (digit && !at_start)) {
      at_start = false;
    } else {
      return false;
    }
  }
  return !at_start;
}

std::optional<std::string_view> LeadingExceptionType(std::string_view body) {
  size_t colon = body.find(':');
  if (colon == std::string_view::npos) return std::nullopt;
  std::string_view name = body.substr(0, colon);
  if (!IsDottedIdentifier(name)) return std::nullopt;
  if (colon + 1 < body.size() && body[colon + 1] != ' ' && body[colon + 1] != '\t') return std::nullopt;
  return name;
}

std::string CutUtf8(std::string_view text, size_t max_bytes) {
  if (text.size() <= max_bytes) return std::string(text);
  size_t cut = max_bytes;
  // Step back over continuation bytes (10xxxxxx) to the start of a sequence.
  while (cut > 0 && (static_cast<unsigned char>(text[cut]) & 0xC0) == 0x80) --cut;
  return std::string(text.substr(0, cut));
}

}  // namespace gpuctl::train
