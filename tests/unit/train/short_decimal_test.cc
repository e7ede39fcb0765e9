// ShortDecimal and ScanNumber, the metrics scanner's fast paths for numbers,
// must read every number they take exactly as from_chars does: the same
// double, bit for bit.
#include <gtest/gtest.h>

#include <charconv>
#include <cstdint>
#include <cstring>
#include <iterator>
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

// One to 18 digits, with a '.' somewhere after the first (three times in four).
std::string RandomDecimal(std::mt19937_64& random) {
  const int digits = 1 + static_cast<int>(random() % 18);
  std::string number;
  for (int d = 0; d < digits; ++d) number += static_cast<char>('0' + random() % 10);
  if (random() % 4 != 0) number.insert(1 + random() % number.size(), ".");
  return number;
}

TEST(ScanNumber, ReadsDecimalsAsFromCharsDoesWhateverEndsThem) {
  // Up to 18 digits, '.' anywhere or nowhere, a sign or none, ended by what
  // is neither a digit, a thousands group nor an exponent: the value
  // from_chars reads, bit for bit, over the whole number.
  const char* ends[] = {"", " ", "|", "x", "%", ")", "/", "s", "-", "\n"};
  std::mt19937_64 random(20261205);
  for (int i = 0; i < 200000; ++i) {
    const std::string number = RandomDecimal(random);
    const char* sign = random() % 8 == 0 ? "-" : "";
    const std::string text = sign + number + ends[random() % std::size(ends)];
    std::optional<ScannedNumber> scanned = ScanNumber(text);
    ASSERT_TRUE(scanned) << text;
    const double expected = sign[0] == '-' ? -FromChars(number) : FromChars(number);
    ASSERT_EQ(BitsOf(scanned->value), BitsOf(expected)) << text;
    ASSERT_EQ(scanned->length, number.size() + (sign[0] == '-' ? 1 : 0)) << text;
    ASSERT_EQ(scanned->whole, number.find('.') == std::string::npos) << text;
  }
}

TEST(ScanNumber, ReadsExponentsAsFromCharsDoes) {
  // Up to 18 digits, '.' anywhere or nowhere, an exponent of one to four
  // digits with a sign or none: in reach of an exact power of ten or not
  // (the fast path takes 15 digits and 10^-22 to 10^22),
  // the value from_chars reads, bit for bit.
  const char* ends[] = {"", " ", ",", "x", "e", "|"};
  std::mt19937_64 random(20261207);
  for (int i = 0; i < 200000; ++i) {
    std::string number = RandomDecimal(random);
    number += random() % 2 == 0 ? "e" : "E";
    number += "\0+-"[random() % 3];
    if (number.back() == '\0') number.pop_back();
    // Up to 10^199 in all, in a double's range; four digits are "00dd".
    const int exponent_digits = 1 + static_cast<int>(random() % 4);
    for (int d = 0; d < exponent_digits; ++d) {
      const bool lead = exponent_digits - d > 2;
      number += static_cast<char>('0' + (lead ? (exponent_digits == 3 ? random() % 2 : 0) : random() % 10));
    }
    const std::string text = number + ends[random() % std::size(ends)];
    std::optional<ScannedNumber> scanned = ScanNumber(text);
    ASSERT_TRUE(scanned) << text;
    ASSERT_EQ(BitsOf(scanned->value), BitsOf(FromChars(number))) << text;
    ASSERT_EQ(scanned->length, number.size()) << text;
    ASSERT_FALSE(scanned->whole) << text;
  }
}

TEST(ScanNumber, ReadsThousandsGroupsAndExponents) {
  struct Case {
    const char* text;
    double value;
    size_t length;
    bool whole;
  };
  const Case cases[] = {
      {"1,234 x", 1234, 5, true},        {"1,23 x", 1, 1, true},          {"1,2345", 1, 1, true},
      {"12,345,678.5|", 12345678.5, 12, false}, {"2.5,123", 2.5, 3, false}, {"3e5", 3e5, 3, false},
      {"3e", 3, 1, true},                {"3E-2|", 0.03, 4, false},       {"1.5e+3 ", 1500, 6, false},
      {"7ex", 7, 1, true},               {"-4,000", -4000, 6, true},      {"693, 'loss'", 693, 3, true},
      {"3,", 3, 1, true},                {"3,1234", 3, 1, true},          {"2.5,", 2.5, 3, false},      {"0.30000000000000004", 0.30000000000000004, 19, false},
      {"3.0e-04,", 3.0e-4, 7, false},    {"1.5e0012", 1.5e12, 8, false},      {"4.5e-05}", 4.5e-05, 7, false},
      {"3.e5", 3e5, 4, false},           {"2e+", 2, 1, true},              {"2.5e-x", 2.5, 3, false},
  };
  for (const Case& c : cases) {
    std::optional<ScannedNumber> scanned = ScanNumber(c.text);
    ASSERT_TRUE(scanned) << c.text;
    EXPECT_DOUBLE_EQ(scanned->value, c.value) << c.text;
    EXPECT_EQ(scanned->length, c.length) << c.text;
    EXPECT_EQ(scanned->whole, c.whole) << c.text;
  }
  EXPECT_FALSE(ScanNumber(".5"));
  EXPECT_FALSE(ScanNumber("x1"));
  EXPECT_FALSE(ScanNumber(""));
  EXPECT_FALSE(ScanNumber("-"));
  EXPECT_FALSE(ScanNumber("+x"));
}

}  // namespace
}  // namespace gpuctl::train
