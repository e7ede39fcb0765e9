// The 64-byte block masks must say of each byte exactly what a byte-by-byte
// test says, on this machine's fast path and on the portable one.
#include "agents/train/byte_masks.h"

#include <gtest/gtest.h>

#include <random>
#include <string>
#include <vector>

namespace gpuctl::train {
namespace {

bool IsWordByteDefinition(char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_';
}
bool IsLineEndDefinition(char c) { return c == '\n' || c == '\r'; }

struct MaskFinder {
  std::string name;
  uint64_t (*bits)(const char*);
  bool (*definition)(char);
};

std::vector<MaskFinder> MaskFinders() {
  std::vector<MaskFinder> finders{{"word, portable", &WordBitsPortable, &IsWordByteDefinition},
                                  {"line end, portable", &LineEndBitsPortable, &IsLineEndDefinition},
                                  {"word, this machine's", &WordBits, &IsWordByteDefinition},
                                  {"line end, this machine's", &LineEndBits, &IsLineEndDefinition}};
#if defined(__SSE2__)
  finders.push_back({"word, sse2", &WordBitsSse2, &IsWordByteDefinition});
  finders.push_back({"line end, sse2", &LineEndBitsSse2, &IsLineEndDefinition});
#endif
  return finders;
}

uint64_t MaskOneByOne(const char* block, bool (*definition)(char)) {
  uint64_t bits = 0;
  for (int i = 0; i < 64; ++i) bits |= uint64_t{definition(block[i])} << i;
  return bits;
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
        EXPECT_EQ((word >> (8 * other + 7)) & 1, IsWordByteDefinition(byte) ? 1u : 0u)
            << "byte " << c << " in lane " << lane << ", lane " << other;
      }
      EXPECT_EQ(word & ~0x8080808080808080ull, 0u);
    }
  }
}

TEST(ByteMasks, EveryByteValueInEveryPosition) {
  for (const MaskFinder& finder : MaskFinders()) {
    // Fillers at the classes' edges, and line ends, so a carry or a borrow
    // between bytes would show.
    char block[64];
    for (int i = 0; i < 64; ++i) block[i] = "/:@[`{\x7f\x80\n\r\x0b\x0c\x8a\x8d_9"[i % 16];
    for (int c = 0; c < 256; ++c) {
      for (int at = 0; at < 64; ++at) {
        const char kept = block[at];
        block[at] = static_cast<char>(c);
        ASSERT_EQ(finder.bits(block), MaskOneByOne(block, finder.definition))
            << finder.name << ": byte " << c << " at " << at;
        block[at] = kept;
      }
    }
  }
}

TEST(ByteMasks, MatchTheByteByByteDefinitionOnRandomBlocks) {
  std::mt19937_64 random(20261206);
  for (const MaskFinder& finder : MaskFinders()) {
    char block[64];
    for (int round = 0; round < 20000; ++round) {
      for (char& c : block) c = static_cast<char>(random());
      // Half the rounds mostly bytes of the classes, so runs of them cross lanes.
      if (round % 2 == 0) {
        for (char& c : block) {
          if (random() % 4 != 0) c = "aZ09_\n\r"[random() % 7];
        }
      }
      ASSERT_EQ(finder.bits(block), MaskOneByOne(block, finder.definition)) << finder.name << ", round " << round;
    }
  }
}

}  // namespace
}  // namespace gpuctl::train
