// Hostile text for the output formatters' tests: a proto with every string
// field (at any depth, repeated ones twice, map keys and values too) set to
// what a job could print, and a check that a formatter's output would not
// drive a terminal.
#pragma once

#include <gtest/gtest.h>

#include <cstdint>
#include <string>
#include <string_view>

#include <google/protobuf/descriptor.h>
#include <google/protobuf/message.h>

#include "common/utf8.h"

namespace gpuctl::client::hostile {

// OSC title, clear screen, hidden text, CR, tab, NUL, DEL, the 8-bit CSI
// (U+009B), bidi overrides and isolates, a line separator, a bad byte, a line
// break and, after it, more escapes and a sequence cut short at the end.
inline std::string HostileText() {
  return std::string("j\x1b]0;pwned\x07\x1b[2J\x1b[8m\r\t") + std::string(1, '\0') +
         "\x7f\xc2\x9b" "31m\xe2\x80\xae\xd8\x9c\xe2\x81\xa6\xe2\x80\xa8\xff\n\x1b[8mnext\xe2\x82";
}

// Every string field of `message` set to `text` + a number (so map keys
// differ), numbers to 1, bools to true, each repeated field given two
// entries, nested messages filled too. Enums are left for the test to set.
inline void FillStrings(google::protobuf::Message* message, const std::string& text, int depth = 0) {
  using google::protobuf::FieldDescriptor;
  const google::protobuf::Descriptor* d = message->GetDescriptor();
  const google::protobuf::Reflection* r = message->GetReflection();
  static int counter = 0;
  for (int i = 0; i < d->field_count(); ++i) {
    const FieldDescriptor* f = d->field(i);
    int times = f->is_repeated() ? 2 : 1;
    for (int k = 0; k < times; ++k) {
      std::string value = text + std::to_string(++counter % 10);
      switch (f->cpp_type()) {
        case FieldDescriptor::CPPTYPE_STRING:
          if (f->is_repeated()) r->AddString(message, f, value);
          else r->SetString(message, f, value);
          break;
        case FieldDescriptor::CPPTYPE_MESSAGE:
          if (depth >= 4) break;
          FillStrings(f->is_repeated() ? r->AddMessage(message, f) : r->MutableMessage(message, f), text, depth + 1);
          break;
        case FieldDescriptor::CPPTYPE_INT32:
          f->is_repeated() ? r->AddInt32(message, f, 1) : r->SetInt32(message, f, 1);
          break;
        case FieldDescriptor::CPPTYPE_INT64:
          f->is_repeated() ? r->AddInt64(message, f, 1) : r->SetInt64(message, f, 1);
          break;
        case FieldDescriptor::CPPTYPE_UINT32:
          f->is_repeated() ? r->AddUInt32(message, f, 1) : r->SetUInt32(message, f, 1);
          break;
        case FieldDescriptor::CPPTYPE_UINT64:
          f->is_repeated() ? r->AddUInt64(message, f, 1) : r->SetUInt64(message, f, 1);
          break;
        case FieldDescriptor::CPPTYPE_DOUBLE:
          f->is_repeated() ? r->AddDouble(message, f, 1.5) : r->SetDouble(message, f, 1.5);
          break;
        case FieldDescriptor::CPPTYPE_FLOAT:
          f->is_repeated() ? r->AddFloat(message, f, 1.5f) : r->SetFloat(message, f, 1.5f);
          break;
        case FieldDescriptor::CPPTYPE_BOOL:
          f->is_repeated() ? r->AddBool(message, f, true) : r->SetBool(message, f, true);
          break;
        case FieldDescriptor::CPPTYPE_ENUM:
          break;
      }
    }
  }
}

// A proto of type T filled with `text` and then shaped (a state, a kind)
// by `shape`.
template <typename T, typename Shape>
T Filled(const std::string& text, Shape shape) {
  T message;
  FillStrings(&message, text);
  shape(message);
  return message;
}

inline size_t Lines(std::string_view text) {
  size_t n = 0;
  for (char c : text) n += c == '\n';
  return n;
}

// Nothing in `out` a terminal would act on: no C0 control but the line
// feeds (and no more of them than `benign_out`, the same output from the
// same proto with harmless text, has), no DEL, no C1 control, no bidi
// control or line separator, no ill-formed UTF-8. And the hostile text must
// be shown (escaped): a formatter that dropped every field would not pass.
inline ::testing::AssertionResult TerminalSafe(std::string_view out, std::string_view benign_out) {
  if (!IsValidUtf8(out)) return ::testing::AssertionFailure() << "ill-formed UTF-8 in:\n" << out;
  for (size_t i = 0; i < out.size();) {
    Utf8Sequence seq = DecodeUtf8At(out, i);
    char32_t cp = seq.code_point;
    bool bad = (cp < 0x20 && cp != '\n') || (cp >= 0x7F && cp <= 0x9F) || cp == 0x061C || cp == 0x200E ||
               cp == 0x200F || (cp >= 0x202A && cp <= 0x202E) || (cp >= 0x2066 && cp <= 0x2069) || cp == 0x2028 ||
               cp == 0x2029;
    if (bad) {
      return ::testing::AssertionFailure() << "U+" << std::hex << static_cast<uint32_t>(cp) << " at byte "
                                           << std::dec << i << " of:\n" << out;
    }
    i += seq.length;
  }
  if (Lines(out) != Lines(benign_out)) {
    return ::testing::AssertionFailure() << Lines(out) << " lines, " << Lines(benign_out)
                                         << " with harmless text: a field broke a line in:\n" << out;
  }
  if (out.find("\\x1b]0;pwned\\x07") == std::string_view::npos) {
    return ::testing::AssertionFailure() << "the hostile text is not shown (escaped) at all in:\n" << out;
  }
  return ::testing::AssertionSuccess();
}

}  // namespace gpuctl::client::hostile
