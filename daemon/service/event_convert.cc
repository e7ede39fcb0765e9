#include "daemon/service/event_convert.h"

namespace gpuctl::daemon {
namespace {

constexpr std::string_view kReplacement = "\xEF\xBF\xBD";

// Length of the valid UTF-8 sequence at text[i], or 0 when it is not one
// (overlong forms, surrogates and code points above U+10FFFF included).
size_t SequenceLength(std::string_view text, size_t i) {
  auto byte = [&](size_t k) { return static_cast<unsigned char>(text[k]); };
  const unsigned char b0 = byte(i);
  if (b0 < 0x80) return 1;
  size_t n = 0;
  unsigned char lo = 0x80;
  unsigned char hi = 0xBF;
  if (b0 >= 0xC2 && b0 <= 0xDF) {
    n = 2;
  } else if (b0 >= 0xE0 && b0 <= 0xEF) {
    n = 3;
    if (b0 == 0xE0) lo = 0xA0;
    if (b0 == 0xED) hi = 0x9F;
  } else if (b0 >= 0xF0 && b0 <= 0xF4) {
    n = 4;
    if (b0 == 0xF0) lo = 0x90;
    if (b0 == 0xF4) hi = 0x8F;
  } else {
    return 0;
  }
  if (i + n > text.size()) return 0;
  if (byte(i + 1) < lo || byte(i + 1) > hi) return 0;
  for (size_t k = 2; k < n; ++k) {
    if ((byte(i + k) & 0xC0) != 0x80) return 0;
  }
  return n;
}

}  // namespace

std::string ValidUtf8(std::string_view text) {
  std::string out;
  out.reserve(text.size());
  for (size_t i = 0; i < text.size();) {
    size_t n = SequenceLength(text, i);
    if (n == 0) {
      out += kReplacement;
      ++i;
    } else {
      out.append(text.substr(i, n));
      i += n;
    }
  }
  return out;
}

void ToProto(const events::AgentEvent& in, v1::AgentEvent& out) {
  out.set_seq(in.seq);
  out.set_time_unix_ms(in.time_unix_ms);
  out.set_kind(ValidUtf8(in.kind));
  out.set_job(ValidUtf8(in.job));
  out.set_message(ValidUtf8(in.message));
  // The contract is an object; anything else a publisher put there is kept under "value".
  nlohmann::json fields = in.fields.is_object() ? in.fields
                          : in.fields.is_null() ? nlohmann::json::object()
                                                : nlohmann::json{{"value", in.fields}};
  // replace: invalid UTF-8 inside a field becomes U+FFFD instead of throwing.
  out.set_fields_json(fields.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace));
}

}  // namespace gpuctl::daemon
