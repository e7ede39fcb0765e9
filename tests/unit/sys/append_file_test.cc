// The event journal's file: appended to whole, and never through a link.
#include "agents/sys/append_file.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <sstream>

#include "tests/fakes/temp_dir.h"

namespace gpuctl::sys {
namespace {

using gpuctl::testing::TempDir;

using gpuctl::testing::ReadText;

TEST(AppendFile, OpensWithTheSizeAndAppendsAtTheEnd) {
  TempDir dir;
  dir.WriteFile("events.jsonl", "one\n");
  Result<AppendTarget> file = OpenForAppend(dir.path() + "/events.jsonl", 0600);
  ASSERT_TRUE(file.ok()) << file.status().ToString();
  EXPECT_EQ(file->size, 4u);
  ASSERT_TRUE(AppendAll(file->fd.get(), "two\n", file->size, "the journal").ok());
  EXPECT_EQ(ReadText(dir.path() + "/events.jsonl"), "one\ntwo\n");
}

TEST(AppendFile, CreatesAMissingFileWithTheMode) {
  TempDir dir;
  Result<AppendTarget> file = OpenForAppend(dir.path() + "/new.jsonl", 0600);
  ASSERT_TRUE(file.ok()) << file.status().ToString();
  EXPECT_EQ(file->size, 0u);
  auto perms = std::filesystem::status(dir.path() + "/new.jsonl").permissions();
  EXPECT_EQ(perms & std::filesystem::perms::all, std::filesystem::perms::owner_read | std::filesystem::perms::owner_write);
}

TEST(AppendFile, RefusesALinkAndWhatIsNotARegularFile) {
  TempDir dir;
  dir.WriteFile("target", "x");
  std::filesystem::create_symlink(dir.path() + "/target", dir.path() + "/link");
  EXPECT_FALSE(OpenForAppend(dir.path() + "/link", 0600).ok());
  EXPECT_EQ(ReadText(dir.path() + "/target"), "x");
  dir.MakeDir("a_dir");
  EXPECT_FALSE(OpenForAppend(dir.path() + "/a_dir", 0600).ok());
}

TEST(AppendFile, AFailedWriteNamesWhatItWasFor) {
  Status s = AppendAll(-1, "line\n", 0, "the event journal /x/events.jsonl");
  ASSERT_FALSE(s.ok());
  EXPECT_NE(s.message().find("cannot append to the event journal /x/events.jsonl"), std::string::npos) << s.message();
}

}  // namespace
}  // namespace gpuctl::sys
