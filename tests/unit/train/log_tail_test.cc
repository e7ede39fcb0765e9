// A failed run's last log lines: from the end, bounded, whole lines only,
// well-formed UTF-8 (they go into protos), a progress bar's last frame.
#include "agents/train/log_tail.h"

#include <gtest/gtest.h>

#include <fstream>

#include "tests/fakes/temp_dir.h"

namespace gpuctl::train {
namespace {

using TailLines = std::vector<std::string>;

TEST(LastLogLines, TheLastFiveNonEmptyLinesOldestFirst) {
  EXPECT_EQ(LastLogLines("1\n2\n3\n\n4\n5\n6\n7\n", false), (TailLines{"3", "4", "5", "6", "7"}));
  EXPECT_EQ(LastLogLines("only\n", false), (TailLines{"only"}));
  EXPECT_EQ(LastLogLines("no newline at the end", false), (TailLines{"no newline at the end"}));
  EXPECT_EQ(LastLogLines("", false), (TailLines{}));
  EXPECT_EQ(LastLogLines("\n\n\n", false), (TailLines{}));
}

TEST(LastLogLines, AFirstLineCutByTheReadIsNotOne) {
  EXPECT_EQ(LastLogLines("half of a line\nwhole\n", true), (TailLines{"whole"}));
  EXPECT_EQ(LastLogLines("all cut", true), (TailLines{}));
}

TEST(LastLogLines, AProgressBarKeepsItsLastFrame) {
  EXPECT_EQ(LastLogLines("10%\r50%\r100%\r\nTraceback\r\n", false), (TailLines{"100%", "Traceback"}));
}

TEST(LastLogLines, ALongLineKeepsItsEnd) {
  std::string line = std::string(1000, 'a') + "the end";
  TailLines got = LastLogLines(line + "\n", false);
  ASSERT_EQ(got.size(), 1u);
  EXPECT_EQ(got[0].size(), 3 + kLogTailLineBytes);
  EXPECT_TRUE(got[0].starts_with("..."));
  EXPECT_TRUE(got[0].ends_with("the end"));
}

TEST(LastLogLines, HostileBytesComeOutWellFormed) {
  TailLines got = LastLogLines("bad \xff\xfe utf8\n\x1b]0;title\x07\n", false);
  ASSERT_EQ(got.size(), 2u);
  EXPECT_EQ(got[0], "bad \xEF\xBF\xBD\xEF\xBF\xBD utf8");
  EXPECT_EQ(got[1], "\x1b]0;title\x07") << "control characters are the reader's to escape";
}

TEST(ReadLogTail, ReadsOnlyTheEndOfABigLog) {
  testing::TempDir dir;
  const std::string path = dir.path() + "/output.log";
  {
    std::ofstream out(path);
    for (int i = 0; i < 100000; ++i) out << "step " << i << " | loss 0.5\n";
    out << "RuntimeError: boom\n";
  }
  TailLines got = ReadLogTail(path);
  ASSERT_EQ(got.size(), kLogTailLines);
  EXPECT_EQ(got.back(), "RuntimeError: boom");
  EXPECT_EQ(got.front(), "step 99996 | loss 0.5");
  EXPECT_EQ(ReadLogTail(dir.path() + "/missing.log"), TailLines{});
}

}  // namespace
}  // namespace gpuctl::train
