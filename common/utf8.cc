#include "common/utf8.h"

#include <cstdint>

namespace gpuctl {
namespace {

// Length of the well-formed sequence starting at text[i], or 0 when the
// bytes there are ill-formed; `bad` then gets the length of the maximal
// ill-formed subpart to replace (at least 1).
size_t SequenceLength(std::string_view text, size_t i, size_t& bad) {
  auto byte = [&](size_t k) { return static_cast<uint8_t>(text[k]); };
  uint8_t lead = byte(i);
  bad = 1;
  if (lead < 0x80) return 1;
  size_t need = 0;
  uint8_t lo = 0x80, hi = 0xBF;  // the second byte's range
  if (lead >= 0xC2 && lead <= 0xDF) {
    need = 2;
  } else if (lead >= 0xE0 && lead <= 0xEF) {
    need = 3;
    if (lead == 0xE0) lo = 0xA0;   // no overlong forms
    if (lead == 0xED) hi = 0x9F;   // no surrogates
  } else if (lead >= 0xF0 && lead <= 0xF4) {
    need = 4;
    if (lead == 0xF0) lo = 0x90;   // no overlong forms
    if (lead == 0xF4) hi = 0x8F;   // nothing above U+10FFFF
  } else {
    return 0;  // 0x80-0xC1, 0xF5-0xFF never start a sequence
  }
  for (size_t k = 1; k < need; ++k) {
    if (i + k >= text.size()) {
      bad = k;
      return 0;
    }
    uint8_t b = byte(i + k);
    bool ok = k == 1 ? (b >= lo && b <= hi) : (b >= 0x80 && b <= 0xBF);
    if (!ok) {
      bad = k;
      return 0;
    }
  }
  return need;
}

}  // namespace

bool IsValidUtf8(std::string_view text) {
  size_t i = 0;
  while (i < text.size()) {
    // ASCII runs, the common case, a word at a time would be faster; byte
    // by byte is already far above any log's rate.
    if (static_cast<uint8_t>(text[i]) < 0x80) {
      ++i;
      continue;
    }
    size_t bad = 0;
    size_t len = SequenceLength(text, i, bad);
    if (len == 0) return false;
    i += len;
  }
  return true;
}

std::string SanitizeUtf8(std::string_view text) {
  if (IsValidUtf8(text)) return std::string(text);
  static constexpr std::string_view kReplacement = "\xEF\xBF\xBD";
  std::string out;
  out.reserve(text.size() + 8);
  size_t i = 0;
  while (i < text.size()) {
    size_t bad = 0;
    size_t len = SequenceLength(text, i, bad);
    if (len == 0) {
      out += kReplacement;
      i += bad;
    } else {
      out.append(text.substr(i, len));
      i += len;
    }
  }
  return out;
}

}  // namespace gpuctl
