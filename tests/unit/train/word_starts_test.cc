#include "agents/train/word_starts.h"

#include <gtest/gtest.h>

#include <random>
#include <string>
#include <vector>

namespace gpuctl::train {
namespace {

bool IsWordByteForTest(char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_';
}

// A byte at a time, as the definition reads.
std::vector<size_t> StartsOneByOne(std::string_view text) {
  std::vector<size_t> starts;
  for (size_t i = 0; i < text.size(); ++i) {
    if (IsWordByteForTest(text[i]) && (i == 0 || !IsWordByteForTest(text[i - 1]))) starts.push_back(i);
  }
  return starts;
}

std::vector<size_t> StartsOf(std::string_view text) {
  std::vector<size_t> starts;
  WordStarts words(text);
  for (size_t at = words.Next(); at != std::string_view::npos; at = words.Next()) starts.push_back(at);
  return starts;
}

TEST(WordStarts, AreWhereAWordByteFollowsAnyOther) {
  EXPECT_EQ(StartsOf(""), std::vector<size_t>{});
  EXPECT_EQ(StartsOf("   "), std::vector<size_t>{});
  EXPECT_EQ(StartsOf("a"), std::vector<size_t>{0});
  EXPECT_EQ(StartsOf("step 693 | loss=2.1"), (std::vector<size_t>{0, 5, 11, 16, 18}));
  // Across the eight-byte blocks: a word that spans one starts once.
  EXPECT_EQ(StartsOf("1234567_abcdefgh ij"), (std::vector<size_t>{0, 17}));
  EXPECT_EQ(StartsOf("1234567 abcdefgh"), (std::vector<size_t>{0, 8}));
  EXPECT_EQ(StartsOf("\xc3\xa9t\xc3\xa9 x"), (std::vector<size_t>{2, 6})) << "UTF-8 bytes end words";
  // Across the 64-byte blocks likewise.
  EXPECT_EQ(StartsOf(std::string(63, ' ') + "ab cd"), (std::vector<size_t>{63, 66}));
  EXPECT_EQ(StartsOf(std::string(64, 'x') + " y"), (std::vector<size_t>{0, 65}));
  EXPECT_EQ(StartsOf(std::string(64, ' ') + "z"), (std::vector<size_t>{64}));
}

TEST(WordStarts, MatchTheByteByByteDefinitionOnRandomText) {
  std::mt19937_64 random(20261205);
  const std::string alphabet = "aZ09_ -.:/|\t\x80\xff\x7f@[`{";
  for (int i = 0; i < 20000; ++i) {
    std::string text(random() % 200, ' ');
    for (char& c : text) c = random() % 4 == 0 ? static_cast<char>(random()) : alphabet[random() % alphabet.size()];
    ASSERT_EQ(StartsOf(text), StartsOneByOne(text)) << text;
  }
}

}  // namespace
}  // namespace gpuctl::train
