#include "common/utf8.h"

#include <gtest/gtest.h>

#include <random>

#include "common/utf8.h"

namespace gpuctl {
namespace {

TEST(EscapeForTerminal, PlainAndPrintableUnicodeTextIsKept) {
  for (std::string_view plain : {"", "plain text", "loss 0.4213 (best 5123 tok/s)", "Ünïcode °C", "训练 😀",
                                 R"(C:\path\x1b is just text)", "\xf4\x8f\xbf\xbf" /* U+10FFFF */,
                                 "\xc2\xa0" /* U+00A0, the first after C1 */, "\xe2\x80\x8b" /* U+200B */}) {
    EXPECT_EQ(EscapeForTerminal(plain), plain);
  }
}

TEST(EscapeForTerminal, EscapeSequencesBecomeVisible) {
  EXPECT_EQ(EscapeForTerminal("\x1b]0;pwned\x07"), R"(\x1b]0;pwned\x07)");  // window title
  EXPECT_EQ(EscapeForTerminal("\x1b[2J"), R"(\x1b[2J)");                    // clear screen
  EXPECT_EQ(EscapeForTerminal("a\x1b[8mhidden"), R"(a\x1b[8mhidden)");      // hidden text
  EXPECT_EQ(EscapeForTerminal("RuntimeError\x1b[0m"), R"(RuntimeError\x1b[0m)");
}

TEST(EscapeForTerminal, C0ControlsAndDelAreEscaped) {
  EXPECT_EQ(EscapeForTerminal("a\nb\rc\td"), R"(a\nb\rc\td)");
  EXPECT_EQ(EscapeForTerminal(std::string_view("\0\x01\x08\x1f\x7f", 5)), R"(\x00\x01\x08\x1f\x7f)");
  EXPECT_EQ(EscapeForTerminal(" ~"), " ~");  // the printable ASCII edges
}

TEST(EscapeForTerminal, C1ControlsAreEscapedAsCodePoints) {
  EXPECT_EQ(EscapeForTerminal("\xc2\x9b" "2J"), R"(\u009b2J)");  // the 8-bit CSI
  EXPECT_EQ(EscapeForTerminal("\xc2\x9d" "0;t\xc2\x9c"), R"(\u009d0;t\u009c)");  // 8-bit OSC ... ST
  EXPECT_EQ(EscapeForTerminal("\xc2\x80|\xc2\x9f"), R"(\u0080|\u009f)");
}

TEST(EscapeForTerminal, BidiControlsAreEscaped) {
  EXPECT_EQ(EscapeForTerminal("evil\xe2\x80\xaetxt.exe"), R"(evil\u202etxt.exe)");  // RIGHT-TO-LEFT OVERRIDE
  EXPECT_EQ(EscapeForTerminal("\xd8\x9c\xe2\x80\x8e\xe2\x80\x8f"), R"(\u061c\u200e\u200f)");
  EXPECT_EQ(EscapeForTerminal("\xe2\x80\xaa\xe2\x81\xa6\xe2\x81\xa9"), R"(\u202a\u2066\u2069)");
  EXPECT_EQ(EscapeForTerminal("a\xe2\x80\xa8" "b\xe2\x80\xa9"), R"(a\u2028b\u2029)");  // line, paragraph separators
}

TEST(EscapeForTerminal, IllFormedUtf8IsEscapedByteByByte) {
  EXPECT_EQ(EscapeForTerminal("\xff"), R"(\xff)");
  EXPECT_EQ(EscapeForTerminal("1.2\xe9 GiB"), R"(1.2\xe9 GiB)");       // Latin-1
  EXPECT_EQ(EscapeForTerminal("\xc0\xaf"), R"(\xc0\xaf)");             // overlong '/'
  EXPECT_EQ(EscapeForTerminal("\xed\xa0\x80"), R"(\xed\xa0\x80)");     // a surrogate
  EXPECT_EQ(EscapeForTerminal("\xc2"), R"(\xc2)");                     // a lone C1 lead byte
  EXPECT_EQ(EscapeForTerminal("\x9b" "2J"), R"(\x9b2J)");              // a bare 8-bit CSI byte
}

TEST(EscapeForTerminal, ATruncatedSequenceAtTheEndShowsItsBytes) {
  EXPECT_EQ(EscapeForTerminal("loss \xe2\x82"), R"(loss \xe2\x82)");  // "€" cut short
  EXPECT_EQ(EscapeForTerminal("\xf0\x9f\x98"), R"(\xf0\x9f\x98)");    // "😀" cut short
  EXPECT_EQ(EscapeForTerminal("\xe2\x82z"), R"(\xe2\x82z)");
}

TEST(EscapeForTerminal, KeepingLinesKeepsOnlyLineFeeds) {
  EXPECT_EQ(EscapeForTerminalKeepingLines("one\ntwo\r\n\x1b[2J\xc2\x9b\n"), "one\ntwo\\r\n\\x1b[2J\\u009b\n");
}

// Whatever the bytes: valid UTF-8 out, no control, no bidi, and escaping
// the result again changes nothing.
TEST(EscapeForTerminal, RandomBytesComeOutInertAndEscapingTwiceIsOnce) {
  std::mt19937 random(7);
  for (int round = 0; round < 3000; ++round) {
    std::string bytes(static_cast<size_t>(random() % 48), '\0');
    // Biased towards the interesting bytes: C2 (C1's lead), E2 80/81 (bidi).
    static constexpr unsigned char kPick[] = {0x1b, 0x07, 0x0a, 0x7f, 0xc2, 0x9b, 0xe2, 0x80, 0x81, 0xae, 0xd8, 0x9c};
    for (char& c : bytes) {
      c = static_cast<char>(random() % 3 == 0 ? kPick[random() % sizeof kPick] : random() % 256);
    }
    std::string once = EscapeForTerminal(bytes);
    ASSERT_TRUE(IsValidUtf8(once)) << once;
    for (size_t i = 0; i < once.size();) {
      Utf8Sequence seq = DecodeUtf8At(once, i);
      char32_t cp = seq.code_point;
      ASSERT_FALSE(cp < 0x20 || (cp >= 0x7f && cp <= 0x9f)) << once;
      ASSERT_FALSE(cp == 0x061c || cp == 0x200e || cp == 0x200f || (cp >= 0x202a && cp <= 0x202e) ||
                   (cp >= 0x2066 && cp <= 0x2069))
          << once;
      i += seq.length;
    }
    ASSERT_EQ(EscapeForTerminal(once), once);
  }
}

TEST(DecodeUtf8At, LengthAndCodePointOrZeroWhenIllFormed) {
  EXPECT_EQ(DecodeUtf8At("a", 0).length, 1u);
  EXPECT_EQ(DecodeUtf8At("a", 0).code_point, U'a');
  EXPECT_EQ(DecodeUtf8At("x\xc3\x9c", 1).code_point, U'\u00dc');
  EXPECT_EQ(DecodeUtf8At("\xe2\x80\xae", 0).code_point, U'\u202e');
  EXPECT_EQ(DecodeUtf8At("\xf0\x9f\x98\x80", 0).code_point, U'\U0001f600');
  EXPECT_EQ(DecodeUtf8At("\xf0\x9f\x98\x80", 0).length, 4u);
  EXPECT_EQ(DecodeUtf8At("\xe2\x82", 0).length, 0u);
  EXPECT_EQ(DecodeUtf8At("\xff", 0).length, 0u);
}

}  // namespace
}  // namespace gpuctl
