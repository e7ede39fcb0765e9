// The few text primitives every parser of kernel and tool output needs:
// trim, split into lines and whitespace-separated words, join, and whole-string
// numbers that refuse "12x" instead of reading 12.
#pragma once

#include <charconv>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace gpuctl::sys {

inline constexpr std::string_view kSpaces = " \t\r\n\v\f";

inline std::string_view Trim(std::string_view s) {
  size_t begin = s.find_first_not_of(kSpaces);
  if (begin == std::string_view::npos) return {};
  return s.substr(begin, s.find_last_not_of(kSpaces) - begin + 1);
}

// Lines without their '\n'; a missing final newline still yields the last line.
inline std::vector<std::string_view> Lines(std::string_view text) {
  std::vector<std::string_view> lines;
  while (!text.empty()) {
    size_t nl = text.find('\n');
    lines.push_back(text.substr(0, nl));
    if (nl == std::string_view::npos) break;
    text.remove_prefix(nl + 1);
  }
  return lines;
}

inline std::vector<std::string_view> Words(std::string_view line) {
  std::vector<std::string_view> words;
  while (true) {
    size_t begin = line.find_first_not_of(kSpaces);
    if (begin == std::string_view::npos) break;
    line.remove_prefix(begin);
    size_t end = line.find_first_of(kSpaces);
    words.push_back(line.substr(0, end));
    if (end == std::string_view::npos) break;
    line.remove_prefix(end);
  }
  return words;
}

// The items with `separator` between them: Join({"a", "b"}, ", ") is "a, b".
inline std::string Join(const std::vector<std::string>& items, std::string_view separator) {
  std::string out;
  for (const std::string& item : items) {
    if (!out.empty()) out += separator;
    out += item;
  }
  return out;
}

// The whole of `s` as a number, or nullopt ("12x", "", "-1" for unsigned).
template <typename T>
std::optional<T> ToNumber(std::string_view s) {
  if (s.empty()) return std::nullopt;
  T value{};
  auto [end, err] = std::from_chars(s.data(), s.data() + s.size(), value);
  if (err != std::errc() || end != s.data() + s.size()) return std::nullopt;
  return value;
}

}  // namespace gpuctl::sys
