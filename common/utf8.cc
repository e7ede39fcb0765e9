#include "common/utf8.h"

#include <cstdint>
#include <cstdio>

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

Utf8Sequence DecodeUtf8At(std::string_view text, size_t at) {
  size_t bad = 0;
  size_t len = SequenceLength(text, at, bad);
  if (len == 0) return {};
  // The lead byte keeps 7, 5, 4 or 3 payload bits; each continuation 6.
  static constexpr uint8_t kLeadMask[] = {0, 0x7F, 0x1F, 0x0F, 0x07};
  char32_t cp = static_cast<uint8_t>(text[at]) & kLeadMask[len];
  for (size_t k = 1; k < len; ++k) cp = (cp << 6) | (static_cast<uint8_t>(text[at + k]) & 0x3F);
  return {len, cp};
}

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

namespace {

// Characters that change how text is laid out or read, though they are
// not C0/C1 controls: reordering (bidi) and line breaks outside ASCII.
bool IsFormatControl(char32_t cp) {
  return cp == 0x061C || cp == 0x200E || cp == 0x200F || (cp >= 0x202A && cp <= 0x202E) ||
         (cp >= 0x2066 && cp <= 0x2069) || cp == 0x2028 || cp == 0x2029;
}

void AppendByteEscape(std::string& out, uint8_t byte) {
  switch (byte) {
    case '\n': out += "\\n"; return;
    case '\r': out += "\\r"; return;
    case '\t': out += "\\t"; return;
    default: break;
  }
  char buf[8];
  std::snprintf(buf, sizeof buf, "\\x%02x", byte);
  out += buf;
}

void AppendCodePointEscape(std::string& out, char32_t cp) {
  char buf[16];
  std::snprintf(buf, sizeof buf, "\\u%04x", static_cast<unsigned>(cp));
  out += buf;
}

std::string Escape(std::string_view text, bool keep_line_feeds) {
  std::string out;
  out.reserve(text.size());
  size_t i = 0;
  while (i < text.size()) {
    uint8_t byte = static_cast<uint8_t>(text[i]);
    if (byte < 0x80) {
      bool control = byte < 0x20 || byte == 0x7F;
      if (control && !(keep_line_feeds && byte == '\n')) AppendByteEscape(out, byte);
      else out += static_cast<char>(byte);
      ++i;
      continue;
    }
    Utf8Sequence seq = DecodeUtf8At(text, i);
    if (seq.length == 0) {
      // One byte at a time: the bytes after an ill-formed lead are looked
      // at afresh, so a truncated sequence shows each of its bytes.
      AppendByteEscape(out, byte);
      ++i;
      continue;
    }
    if ((seq.code_point >= 0x80 && seq.code_point <= 0x9F) || IsFormatControl(seq.code_point)) {
      AppendCodePointEscape(out, seq.code_point);
    } else {
      out.append(text.substr(i, seq.length));
    }
    i += seq.length;
  }
  return out;
}

}  // namespace

std::string EscapeForTerminal(std::string_view text) { return Escape(text, false); }

std::string EscapeForTerminalKeepingLines(std::string_view text) { return Escape(text, true); }

}  // namespace gpuctl
