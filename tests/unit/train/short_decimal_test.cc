// ShortDecimal, the metrics scanner's fast path for numbers, must read every
// number it takes exactly as from_chars does: the same double, bit for bit.
#include <gtest/gtest.h>

#include <charconv>
#include <cstdint>
#include <cstring>
#include <random>
#include <string>

#include "agents/train/metrics_scanner.h"

namespace gpuctl::train {
namespace {

uint64_t BitsOf(double value) {
  uint64_t bits = 0;
  std::memcpy(&bits, &value, sizeof bits);
  return bits;
}

double FromChars(const std::string& text) {
  double value = 0;
  std::from_chars(text.data(), text.data() + text.size(), value);
  return value;
}

TEST(ShortDecimal, ReadsAsFromCharsDoesBitForBit) {
  for (const char* text : {"0", "693", "2.1043", "0.1", "3.0", "0.0000001", "123456789012345", "99999999.9999999",
                           "1.25", "4.5", "0.12", "13.8", "007", "1.", "0.30000000000000004"}) {
    std::optional<double> fast = ShortDecimal(text);
    if (std::strlen(text) - (std::strchr(text, '.') ? 1 : 0) > 15) {
      EXPECT_FALSE(fast) << text << ": more than 15 digits goes to from_chars";
      continue;
    }
    ASSERT_TRUE(fast) << text;
    EXPECT_EQ(BitsOf(*fast), BitsOf(FromChars(text))) << text;
  }
  // Many more, with every split of up to 15 digits.
  std::mt19937_64 random(20261204);
  for (int i = 0; i < 200000; ++i) {
    const int digits = 1 + static_cast<int>(random() % 15);
    std::string text;
    for (int d = 0; d < digits; ++d) text += static_cast<char>('0' + random() % 10);
    if (random() % 4 != 0) text.insert(random() % (text.size() + 1), ".");
    std::optional<double> fast = ShortDecimal(text);
    ASSERT_TRUE(fast) << text;
    ASSERT_EQ(BitsOf(*fast), BitsOf(FromChars(text))) << text;
  }
}

TEST(ShortDecimal, LeavesWhatItCannotReadExactlyToFromChars) {
  EXPECT_FALSE(ShortDecimal("3.0e-04")) << "an exponent";
  EXPECT_FALSE(ShortDecimal("1234567890123456")) << "16 digits";
  EXPECT_FALSE(ShortDecimal("1.2.3"));
  EXPECT_FALSE(ShortDecimal("."));
  EXPECT_FALSE(ShortDecimal(""));
}

}  // namespace
}  // namespace gpuctl::train
