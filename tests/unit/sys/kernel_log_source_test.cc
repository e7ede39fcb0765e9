#include "agents/sys/kernel_log_source.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <gtest/gtest.h>

#include <cerrno>
#include <cstdio>
#include <string>
#include <vector>

#include "tests/fakes/skip_policy.h"
#include "tests/fakes/temp_dir.h"

namespace gpuctl::sys {
namespace {

using gpuctl::testing::TempDir;
using Lines = std::vector<std::string>;

// Appends without truncating (TempDir::WriteFile rewrites the file).
void AppendToLog(const std::string& path, std::string_view text) {
  FILE* file = std::fopen(path.c_str(), "ab");
  ASSERT_NE(file, nullptr) << path;
  ASSERT_EQ(std::fwrite(text.data(), 1, text.size(), file), text.size());
  std::fclose(file);
}

KernelLogSource OpenLog(const std::string& path, bool from_start) {
  auto source = KernelLogSource::Open(path, from_start);
  EXPECT_TRUE(source.ok()) << source.status().ToString();
  return std::move(source).value();
}

TEST(KernelLogSourceFile, FromTheEndReadsOnlyAppendsAndWaitsForNewlines) {
  TempDir dir;
  dir.WriteFile("kern.log", "old 1\nold 2\n");
  std::string path = dir.path() + "/kern.log";
  KernelLogSource source = OpenLog(path, false);
  EXPECT_EQ(source.kind(), KernelLogSource::Kind::kRegularFile);
  EXPECT_EQ(source.ReadLines(), Lines{});

  AppendToLog(path, "new 1\nnew 2\nhalf a li");
  EXPECT_EQ(source.ReadLines(), (Lines{"new 1", "new 2"}));
  EXPECT_EQ(source.ReadLines(), Lines{}) << "a partial line waits for its newline";
  AppendToLog(path, "ne\r\nnext");
  EXPECT_EQ(source.ReadLines(), Lines{"half a line"}) << "and a \\r before it is dropped";
  AppendToLog(path, "\n\n");
  EXPECT_EQ(source.ReadLines(), (Lines{"next", ""}));
  EXPECT_TRUE(source.last_error().ok());
}

TEST(KernelLogSourceFile, FromTheStartReadsWhatIsThere) {
  TempDir dir;
  dir.WriteFile("kern.log", "one\ntwo\n");
  KernelLogSource source = OpenLog(dir.path() + "/kern.log", true);
  EXPECT_EQ(source.ReadLines(), (Lines{"one", "two"}));
}

TEST(KernelLogSourceFile, FromTheEndSkipsTheTailOfALineBeingWritten) {
  TempDir dir;
  dir.WriteFile("kern.log", "done\nhalf of it");
  std::string path = dir.path() + "/kern.log";
  KernelLogSource source = OpenLog(path, false);
  AppendToLog(path, " and the rest\nwhole\n");
  EXPECT_EQ(source.ReadLines(), Lines{"whole"});
}

TEST(KernelLogSourceFile, MaxLinesLeavesTheRestForTheNextCall) {
  TempDir dir;
  dir.WriteFile("kern.log", "a\nb\nc\nd\ne\n");
  KernelLogSource source = OpenLog(dir.path() + "/kern.log", true);
  EXPECT_EQ(source.ReadLines(2), (Lines{"a", "b"}));
  EXPECT_EQ(source.ReadLines(2), (Lines{"c", "d"}));
  EXPECT_EQ(source.ReadLines(0), Lines{});
  EXPECT_EQ(source.ReadLines(2), Lines{"e"});
}

TEST(KernelLogSourceFile, TruncationStartsOver) {
  TempDir dir;
  dir.WriteFile("kern.log", "first line of the old content\n");
  std::string path = dir.path() + "/kern.log";
  KernelLogSource source = OpenLog(path, true);
  EXPECT_EQ(source.ReadLines(), Lines{"first line of the old content"});
  AppendToLog(path, "partial");
  EXPECT_EQ(source.ReadLines(), Lines{});
  ASSERT_EQ(::truncate(path.c_str(), 0), 0);
  AppendToLog(path, "after\n");
  EXPECT_EQ(source.ReadLines(), Lines{"after"}) << "nor is the old partial line glued on";
}

TEST(KernelLogSourceFile, RotationFinishesTheOldFileThenReadsTheNew) {
  TempDir dir;
  dir.WriteFile("kern.log", "");
  std::string path = dir.path() + "/kern.log";
  KernelLogSource source = OpenLog(path, false);
  AppendToLog(path, "old last\n");
  ASSERT_EQ(::rename(path.c_str(), (path + ".1").c_str()), 0);
  EXPECT_EQ(source.ReadLines(), Lines{"old last"}) << "nothing at the path yet: the old file is kept";
  AppendToLog(path + ".1", "late write to the old file\n");
  AppendToLog(path, "new first\nnew second\n");
  EXPECT_EQ(source.ReadLines(), (Lines{"late write to the old file", "new first", "new second"}));
  EXPECT_NE(source.fd(), -1);
  AppendToLog(path, "more\n");
  EXPECT_EQ(source.ReadLines(), Lines{"more"});
}

TEST(KernelLogSourceFile, AnOverlongLineIsDroppedAndCounted) {
  TempDir dir;
  dir.WriteFile("kern.log", "");
  std::string path = dir.path() + "/kern.log";
  KernelLogSource source = OpenLog(path, true);
  std::string huge(KernelLogSource::kMaxLineBytes + 10, 'x');
  AppendToLog(path, "before\n" + huge);
  EXPECT_EQ(source.ReadLines(), Lines{"before"});
  EXPECT_EQ(source.overlong_lines(), 1u);
  AppendToLog(path, "still the long line\nafter\n");
  EXPECT_EQ(source.ReadLines(), Lines{"after"});
  EXPECT_EQ(source.overlong_lines(), 1u);

  // Exactly at the bound is a line.
  std::string at_bound(KernelLogSource::kMaxLineBytes, 'y');
  AppendToLog(path, at_bound + "\n");
  Lines lines = source.ReadLines();
  ASSERT_EQ(lines.size(), 1u);
  EXPECT_EQ(lines[0].size(), KernelLogSource::kMaxLineBytes);
}

TEST(KernelLogSourceFile, StaysUsableAfterAMove) {
  TempDir dir;
  dir.WriteFile("kern.log", "x\n");
  KernelLogSource first = OpenLog(dir.path() + "/kern.log", true);
  KernelLogSource moved = std::move(first);
  EXPECT_EQ(moved.ReadLines(), Lines{"x"});
  int fd = moved.fd();
  {
    KernelLogSource gone = std::move(moved);
  }
  EXPECT_EQ(::fcntl(fd, F_GETFD), -1) << "the descriptor is closed with its owner";
}

TEST(KernelLogSourceFifo, SplitsLinesAndSurvivesWritersComingAndGoing) {
  TempDir dir;
  std::string path = dir.path() + "/kmsg.fifo";
  ASSERT_EQ(::mkfifo(path.c_str(), 0600), 0);
  KernelLogSource source = OpenLog(path, false);  // no writer yet: must not block
  EXPECT_EQ(source.kind(), KernelLogSource::Kind::kFifo);
  EXPECT_EQ(source.ReadLines(), Lines{});

  int writer = ::open(path.c_str(), O_WRONLY | O_NONBLOCK);
  ASSERT_GE(writer, 0);
  ASSERT_EQ(::write(writer, "a\nb", 3), 3);
  EXPECT_EQ(source.ReadLines(), Lines{"a"});
  ASSERT_EQ(::write(writer, "c\nd\n", 4), 4);
  EXPECT_EQ(source.ReadLines(), (Lines{"bc", "d"}));
  ::close(writer);
  EXPECT_EQ(source.ReadLines(), Lines{}) << "no writer: nothing, and no error";
  EXPECT_TRUE(source.last_error().ok()) << source.last_error().ToString();

  int second = ::open(path.c_str(), O_WRONLY | O_NONBLOCK);
  ASSERT_GE(second, 0);
  ASSERT_EQ(::write(second, "e\n", 2), 2);
  EXPECT_EQ(source.ReadLines(), Lines{"e"});
  ::close(second);
}

TEST(KernelLogSourceOpen, RefusesWhatItCannotRead) {
  TempDir dir;
  auto missing = KernelLogSource::Open(dir.path() + "/nope", false);
  ASSERT_FALSE(missing.ok());
  EXPECT_EQ(missing.status().code(), ErrorCode::kNotFound);

  auto directory = KernelLogSource::Open(dir.path(), false);
  ASSERT_FALSE(directory.ok());
  EXPECT_EQ(directory.status().code(), ErrorCode::kFailedPrecondition);
  EXPECT_NE(directory.status().message().find("directory"), std::string::npos);

  auto device = KernelLogSource::Open("/dev/null", false);
  ASSERT_FALSE(device.ok());
  EXPECT_EQ(device.status().code(), ErrorCode::kFailedPrecondition) << "only /dev/kmsg among devices";

  auto relative = KernelLogSource::Open("kern.log", false);
  ASSERT_FALSE(relative.ok());
  EXPECT_EQ(relative.status().code(), ErrorCode::kInvalidArgument);
}

// The real /dev/kmsg: one record per line, continuation lines dropped, and
// opened at the end nothing from before.
TEST(KernelLogSourceKmsg, ReadsRecordsAndSkipsOldOnesAtTheEnd) {
  auto all = KernelLogSource::Open("/dev/kmsg", true);
  if (!all.ok()) {
    GPUCTL_SKIP_ALLOWED(kPlatform) << "/dev/kmsg cannot be read here: " << all.status().ToString();
  }
  EXPECT_EQ(all->kind(), KernelLogSource::Kind::kKmsg);
  uint64_t last_seq = 0;
  size_t seen = 0;
  for (Lines lines = all->ReadLines(); !lines.empty(); lines = all->ReadLines()) {
    for (const std::string& line : lines) {
      ++seen;
      ASSERT_FALSE(line.empty());
      EXPECT_NE(line.front(), ' ') << "a continuation line: " << line;
      EXPECT_EQ(line.find('\n'), std::string::npos);
      size_t first = line.find(',');
      ASSERT_NE(first, std::string::npos) << line;
      last_seq = std::stoull(line.substr(first + 1, line.find(',', first + 1) - first - 1));
    }
  }
  EXPECT_GT(seen, 0u) << "the ring holds at least the boot messages";

  auto tail = KernelLogSource::Open("/dev/kmsg", false);
  ASSERT_TRUE(tail.ok()) << tail.status().ToString();
  int kmsg = ::open("/dev/kmsg", O_WRONLY);
  if (kmsg < 0) {
    GPUCTL_SKIP_ALLOWED(kPlatform) << "/dev/kmsg is not writable here (errno " << errno << ")";
  }
  std::string marker = "gpuctl unit test KernelLogSource " + std::to_string(::getpid());
  std::string record = "<6>" + marker + "\n";
  ASSERT_EQ(::write(kmsg, record.data(), record.size()), static_cast<ssize_t>(record.size()));
  ::close(kmsg);
  bool found = false;
  for (const std::string& line : tail->ReadLines()) {
    size_t first = line.find(',');
    ASSERT_NE(first, std::string::npos) << line;
    EXPECT_GT(std::stoull(line.substr(first + 1)), last_seq) << "a record from before the open: " << line;
    if (line.ends_with(";" + marker)) found = true;
  }
  EXPECT_TRUE(found);
}

}  // namespace
}  // namespace gpuctl::sys
