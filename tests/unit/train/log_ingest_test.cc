// LogIngest reads a job's log into its record a tick at a time; what it
// counts as novel output (hang detection reads it) must tell apart lines
// that differ in any one byte, and not count a repeat of a recent one.
#include "agents/train/log_ingest.h"

#include <gtest/gtest.h>

#include <fstream>
#include <string>

#include "tests/fakes/temp_dir.h"

namespace gpuctl::train {
namespace {

class LogIngestTest : public ::testing::Test {
 protected:
  LogIngestTest() {
    record_.spec.name = "ingest";
    record_.state = JobState::kRunning;
    record_.log_path = dir_.path() + "/output.log";
    dir_.WriteFile("output.log", "");
  }

  // Appends `text` and reads it in, `tick` bytes at most a read, until a
  // read takes nothing more.
  void AppendAndRead(const std::string& text, size_t tick = 1 << 20) {
    std::ofstream(record_.log_path, std::ios::app | std::ios::binary) << text;
    uint64_t before = 0;
    do {
      before = record_.parsed_offset;
      ingest_.Ingest(record_, tick, 0, nullptr);
    } while (record_.parsed_offset != before);
  }

  testing::TempDir dir_;
  JobRecord record_;
  LogIngest ingest_;
};

TEST_F(LogIngestTest, ALineDifferingInAnyOneByteIsNovelAndARecentRepeatIsNot) {
  uint64_t expected = 0;
  for (size_t length = 1; length <= 70; ++length) {
    const std::string line(length, 'a');
    AppendAndRead(line + "\n");
    ++expected;
    for (size_t at = 0; at < length; ++at) {
      std::string changed = line;
      changed[at] = 'b';
      AppendAndRead(changed + "\n" + changed + "\n");  // the second is a repeat
      ++expected;
      ASSERT_EQ(ingest_.novel_lines(), expected) << "length " << length << ", byte " << at;
    }
  }
}

TEST_F(LogIngestTest, BlankLinesAndRedrawsOfTheSameBarAreNotNovel) {
  AppendAndRead(" 45%|####      | 450/1000\r 45%|####      | 450/1000\r\n  \n\t\n");
  EXPECT_EQ(ingest_.novel_lines(), 1u);
  AppendAndRead(" 46%|####      | 460/1000\r");
  EXPECT_EQ(ingest_.novel_lines(), 2u);
}

TEST_F(LogIngestTest, ALineSplitAcrossReadsIsReadOnceWhole) {
  // Reads of 20 bytes: longer than each line (a read holding no line end
  // waits for more, up to the splitter's cap), shorter than the two.
  AppendAndRead("step 1 loss 2.5\nstep 2 lo", 20);
  EXPECT_EQ(record_.metrics.step, 1u);
  EXPECT_EQ(ingest_.novel_lines(), 1u) << "the head of a line is held back";
  AppendAndRead("ss 2.25\n", 20);
  EXPECT_EQ(record_.metrics.step, 2u);
  EXPECT_EQ(record_.metrics.loss, 2.25);
  EXPECT_EQ(ingest_.novel_lines(), 2u);
  EXPECT_EQ(record_.parsed_offset, record_.log_bytes);
}

}  // namespace
}  // namespace gpuctl::train
