// ReadRegularFileRangeInto reads a range of a regular file into a buffer that
// it grows and never shrinks, so a reader coming back each tick reuses it.
#include <gtest/gtest.h>
#include <sys/stat.h>

#include <string>

#include "agents/sys/files.h"
#include "tests/fakes/temp_dir.h"

namespace gpuctl::sys {
namespace {

using testing::TempDir;

TEST(ReadRegularFileRangeInto, ReadsTheRangeToTheBuffersFrontAndKeepsItsSize) {
  TempDir dir;
  dir.WriteFile("output.log", "0123456789");
  const std::string log = dir.path() + "/output.log";
  std::string buffer;

  Result<size_t> got = ReadRegularFileRangeInto(log, 2, 5, buffer);
  ASSERT_TRUE(got.ok()) << got.status().message();
  EXPECT_EQ(*got, 5u);
  EXPECT_EQ(buffer.substr(0, *got), "23456");

  // Less than the buffer holds: the front is overwritten, the size kept.
  got = ReadRegularFileRangeInto(log, 8, 100, buffer);
  ASSERT_TRUE(got.ok());
  EXPECT_EQ(*got, 2u) << "at most what the file holds";
  EXPECT_EQ(buffer.substr(0, *got), "89");
  EXPECT_EQ(buffer.size(), 5u);

  got = ReadRegularFileRangeInto(log, 10, 100, buffer);
  ASSERT_TRUE(got.ok());
  EXPECT_EQ(*got, 0u) << "at the end";
  got = ReadRegularFileRangeInto(log, 50, 100, buffer);
  ASSERT_TRUE(got.ok());
  EXPECT_EQ(*got, 0u) << "past the end (a log cut meanwhile)";

  // More than it holds: it grows.
  got = ReadRegularFileRangeInto(log, 0, 100, buffer);
  ASSERT_TRUE(got.ok());
  EXPECT_EQ(buffer.substr(0, *got), "0123456789");
}

TEST(ReadRegularFileRangeInto, RefusesWhatIsNotARegularFileAsTheOtherReadersDo) {
  TempDir dir;
  std::string buffer = "kept";
  ASSERT_EQ(::mkfifo((dir.path() + "/fifo").c_str(), 0600), 0);
  Result<size_t> fifo = ReadRegularFileRangeInto(dir.path() + "/fifo", 0, 10, buffer);
  EXPECT_EQ(fifo.status().code(), ErrorCode::kFailedPrecondition) << fifo.status().message();
  Result<size_t> missing = ReadRegularFileRangeInto(dir.path() + "/missing", 0, 10, buffer);
  EXPECT_EQ(missing.status().code(), ErrorCode::kNotFound);
  EXPECT_EQ(buffer, "kept");
}

}  // namespace
}  // namespace gpuctl::sys
