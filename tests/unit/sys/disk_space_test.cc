#include "agents/sys/disk_space.h"

#include <gtest/gtest.h>

#include <cerrno>

#include <filesystem>
#include <fstream>
#include <sstream>

#include "tests/fakes/temp_dir.h"

namespace gpuctl::sys {
namespace {

namespace fs = std::filesystem;
using testing::TempDir;

using gpuctl::testing::ReadText;

TEST(DiskSpace, TheSpareTakesTheContentAndBecomesTheFile) {
  TempDir dir;
  const std::string path = dir.path() + "/job.json", spare = path + ".spare";
  std::ofstream(path) << "old";
  ASSERT_TRUE(KeepSpareFile(spare, 100).ok());
  EXPECT_GE(fs::file_size(spare), 100u);
  ASSERT_TRUE(WriteFileFromSpare(spare, path, "{\"state\": \"failed\"}\n").ok());
  EXPECT_EQ(ReadText(path), "{\"state\": \"failed\"}\n") << "cut to length, nothing of the spare left";
  EXPECT_FALSE(fs::exists(spare)) << "used up";
  // No spare left: the next one says so, and the file is untouched.
  Status again = WriteFileFromSpare(spare, path, "x");
  EXPECT_EQ(again.code(), ErrorCode::kFailedPrecondition) << again.message();
  EXPECT_EQ(ReadText(path), "{\"state\": \"failed\"}\n");
}

TEST(DiskSpace, ASpareTooSmallIsRefusedAndKeptWhenBigEnough) {
  TempDir dir;
  const std::string path = dir.path() + "/f", spare = path + ".spare";
  ASSERT_TRUE(KeepSpareFile(spare, 10).ok());
  const auto size = fs::file_size(spare);
  Status big = WriteFileFromSpare(spare, path, std::string(size + 1, 'x'));
  EXPECT_EQ(big.code(), ErrorCode::kFailedPrecondition) << big.message();
  EXPECT_FALSE(fs::exists(path));
  // Already big enough: left as it is (no rewrite at every save).
  const auto written_at = fs::last_write_time(spare);
  ASSERT_TRUE(KeepSpareFile(spare, size).ok());
  EXPECT_EQ(fs::last_write_time(spare), written_at);
  // Asked for more: grown, with room to spare.
  ASSERT_TRUE(KeepSpareFile(spare, size + 1).ok());
  EXPECT_GE(fs::file_size(spare), 2 * (size + 1));
}

TEST(DiskSpace, OutOfSpaceIsToldFromOtherErrors) {
  EXPECT_TRUE(IsOutOfSpace(ErrnoError("cannot write /x", ENOSPC)));
  EXPECT_TRUE(IsOutOfSpace(ErrnoError("cannot write /x", EDQUOT)));
  EXPECT_FALSE(IsOutOfSpace(ErrnoError("cannot write /x", EIO)));
  EXPECT_FALSE(IsOutOfSpace(Status::Ok()));
}

TEST(DiskSpace, FreeBytesReadsTheFilesystem) {
  TempDir dir;
  std::optional<uint64_t> free = FreeBytes(dir.path());
  ASSERT_TRUE(free.has_value());
  // Other processes write to the same filesystem between the two reads:
  // equal to within 64 MiB (a wrong field, f_bfree's root reserve or a
  // block-size slip, is gigabytes off).
  const uint64_t available = fs::space(dir.path()).available;
  const uint64_t apart = *free > available ? *free - available : available - *free;
  EXPECT_LE(apart, uint64_t{64} << 20) << *free << " vs " << available;
  EXPECT_FALSE(FreeBytes(dir.path() + "/missing").has_value());
}

}  // namespace
}  // namespace gpuctl::sys
