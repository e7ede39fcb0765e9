#include "agents/train/literal_scanner.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

namespace gpuctl::train {
namespace {

TEST(LiteralScanner, ReportsEachLiteralThatOccurs) {
  LiteralScanner scanner({"step", "loss", "tok", "s/it", "<"});
  EXPECT_EQ(scanner.Scan("step 5 | loss 2.0 | 13.8 Ktok/s"), 0b00111u);
  EXPECT_EQ(scanner.Scan("5/9 [00:10<00:08, 2.00s/it]"), 0b11000u);
  EXPECT_EQ(scanner.Scan("nothing here"), 0u);
  EXPECT_EQ(scanner.Scan(""), 0u);
}

TEST(LiteralScanner, OverlappingAndNestedLiterals) {
  // "he" inside "she", "hers" sharing a prefix with "he", "his" after a failed "hers".
  LiteralScanner scanner({"he", "she", "his", "hers"});
  EXPECT_EQ(scanner.Scan("ushers"), 0b1011u);
  EXPECT_EQ(scanner.Scan("ahishe"), 0b0111u);
  EXPECT_EQ(scanner.Scan("hhhhhe"), 0b0001u);
  EXPECT_EQ(scanner.Scan("h e"), 0u);
}

TEST(LiteralScanner, RepeatsAndBytesAbove127) {
  LiteralScanner scanner({"aab", "█", "", "ab"});
  EXPECT_EQ(scanner.Scan("aaab"), 0b1001u);
  EXPECT_EQ(scanner.Scan("12%|█▏"), 0b0010u);
  EXPECT_EQ(scanner.Scan("aa"), 0u);
}

TEST(LiteralScanner, SixtyFourLiterals) {
  std::vector<std::string> literals;
  for (int i = 0; i < 64; ++i) literals.push_back("k" + std::to_string(i) + ";");
  LiteralScanner scanner(literals);
  EXPECT_EQ(scanner.Scan("k0; k63;"), (uint64_t{1} << 63) | 1u);
  EXPECT_EQ(scanner.Scan("k6"), 0u);
}

}  // namespace
}  // namespace gpuctl::train
