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

TEST(WordBytesOf, EveryByteValueAlone) {
  for (int c = 0; c < 256; ++c) {
    for (int lane = 0; lane < 8; ++lane) {
      // The byte in one lane, its neighbours the bytes either side of the
      // ranges' edges, where a borrow would show.
      uint64_t bytes = 0;
      for (int other = 0; other < 8; ++other) {
        const uint64_t filler = static_cast<unsigned char>("/:@[`{\x7f\x80"[other]);
        bytes |= (other == lane ? static_cast<uint64_t>(c) : filler) << (8 * other);
      }
      const uint64_t word = WordBytesOf(bytes);
      for (int other = 0; other < 8; ++other) {
        const char byte = static_cast<char>(bytes >> (8 * other));
        EXPECT_EQ((word >> (8 * other + 7)) & 1, IsWordByteForTest(byte) ? 1u : 0u)
            << "byte " << c << " in lane " << lane << ", lane " << other;
      }
      EXPECT_EQ(word & ~0x8080808080808080ull, 0u);
    }
  }
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
}

TEST(WordStarts, MatchTheByteByByteDefinitionOnRandomText) {
  std::mt19937_64 random(20261205);
  const std::string alphabet = "aZ09_ -.:/|\t\x80\xff\x7f@[`{";
  for (int i = 0; i < 20000; ++i) {
    std::string text(random() % 40, ' ');
    for (char& c : text) c = random() % 4 == 0 ? static_cast<char>(random()) : alphabet[random() % alphabet.size()];
    ASSERT_EQ(StartsOf(text), StartsOneByOne(text)) << text;
  }
}

}  // namespace
}  // namespace gpuctl::train
