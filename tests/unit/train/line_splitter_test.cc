#include "agents/train/line_splitter.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <random>
#include <string>
#include <utility>
#include <vector>

namespace gpuctl::train {
namespace {

using Lines = std::vector<std::pair<std::string, uint64_t>>;

class Collect {
 public:
  LineSplitter::LineSink sink() {
    return [this](std::string_view line, uint64_t offset) { lines.emplace_back(line, offset); };
  }
  Lines lines;
};

TEST(LineSplitter, NewlineAndCarriageReturnEndLines) {
  LineSplitter splitter;
  Collect got;
  splitter.Feed("a\nbb\rccc\r\n\nd", 100, got.sink());
  EXPECT_EQ(got.lines, (Lines{{"a", 100}, {"bb", 102}, {"ccc", 105}, {"", 109}, {"", 110}}));
  splitter.Finish(got.sink());
  EXPECT_EQ(got.lines.back(), (std::pair<std::string, uint64_t>{"d", 111}));
}

TEST(LineSplitter, JoinsALineAcrossChunks) {
  LineSplitter splitter;
  Collect got;
  splitter.Feed("hel", 0, got.sink());
  splitter.Feed("lo wo", 3, got.sink());
  EXPECT_TRUE(got.lines.empty());
  splitter.Feed("rld\nnext", 8, got.sink());
  EXPECT_EQ(got.lines, (Lines{{"hello world", 0}}));
}

TEST(LineSplitter, KeepsTheHeadOfALongLineAndCountsTheRest) {
  LineSplitter splitter(8);
  Collect got;
  splitter.Feed("0123456", 0, got.sink());
  splitter.Feed("789abcdef", 7, got.sink());
  splitter.Feed("ghij\nxy\n0123456789\n", 16, got.sink());
  EXPECT_EQ(got.lines, (Lines{{"01234567", 0}, {"xy", 21}, {"01234567", 24}}));
}

TEST(LineSplitter, OverlapIsSkippedAndAGapRestarts) {
  LineSplitter splitter;
  Collect got;
  splitter.Feed("abc\nde", 0, got.sink());
  splitter.Feed("c\ndef\n", 2, got.sink());  // bytes 2..5 were fed already
  EXPECT_EQ(got.lines, (Lines{{"abc", 0}, {"def", 4}}));
  splitter.Feed("par", 8, got.sink());
  splitter.Feed("tial\nz\n", 50, got.sink());  // a gap: "par" is dropped
  EXPECT_EQ(got.lines, (Lines{{"abc", 0}, {"def", 4}, {"tial", 50}, {"z", 55}}));
  splitter.Feed("new\n", 0, got.sink());  // the log was truncated: start again
  EXPECT_EQ(got.lines.back(), (std::pair<std::string, uint64_t>{"new", 0}));
}

TEST(LineSplitter, EmptyChunksChangeNothing) {
  LineSplitter splitter;
  Collect got;
  splitter.Feed("ab", 0, got.sink());
  splitter.Feed("", 999, got.sink());
  splitter.Feed("c\n", 2, got.sink());
  EXPECT_EQ(got.lines, (Lines{{"abc", 0}}));
}

// Lines as the definition reads, a byte at a time over the whole text.
Lines SplitOneByOne(const std::string& text, uint64_t offset) {
  Lines lines;
  size_t start = 0;
  for (size_t i = 0; i < text.size(); ++i) {
    if (text[i] == '\n' || text[i] == '\r') {
      lines.emplace_back(text.substr(start, i - start), offset + start);
      start = i + 1;
    }
  }
  if (start < text.size()) lines.emplace_back(text.substr(start), offset + start);
  return lines;
}

TEST(LineSplitter, MatchesTheByteByByteDefinitionInAnyChunks) {
  // Lines of any length (across the 64-byte blocks the ends are found in),
  // any bytes, cut into chunks anywhere.
  std::mt19937_64 random(20261208);
  for (int round = 0; round < 3000; ++round) {
    std::string text(random() % 400, ' ');
    for (char& c : text) {
      const uint64_t pick = random() % 16;
      c = pick == 0 ? '\n' : pick == 1 ? '\r' : pick == 2 ? static_cast<char>(random()) : 'a' + static_cast<char>(pick);
    }
    LineSplitter splitter;
    Collect got;
    for (size_t at = 0; at < text.size();) {
      const size_t size = std::min(text.size() - at, static_cast<size_t>(1 + random() % 150));
      splitter.Feed(std::string_view(text).substr(at, size), 1000 + at, got.sink());
      at += size;
    }
    splitter.Finish(got.sink());
    ASSERT_EQ(got.lines, SplitOneByOne(text, 1000)) << "round " << round;
  }
}

}  // namespace
}  // namespace gpuctl::train
