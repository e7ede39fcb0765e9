// IdentifiedFile reads a file only while the path is the file named by device
// and inode: a rename keeps a file, a new file of the old name is another.
#include "agents/sys/boot_id.h"
#include "agents/sys/identified_file.h"

#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstdio>
#include <string>

#include "agents/sys/files.h"
#include "tests/fakes/temp_dir.h"

namespace gpuctl::sys {
namespace {

using testing::TempDir;

FileIdentity IdentityOf(const std::string& path) {
  Result<FileIdentity> id = RegularFileIdentity(path);
  EXPECT_TRUE(id.ok()) << id.status().message();
  return id.ok() ? *id : FileIdentity{};
}

std::string ReadIdentified(const IdentifiedFile& file, uint64_t offset, size_t size) {
  std::string out(size, '\0');
  Result<size_t> got = file.ReadAt(offset, out.data(), out.size());
  EXPECT_TRUE(got.ok()) << got.status().message();
  out.resize(got.ok() ? *got : 0);
  return out;
}

TEST(RegularFileIdentity, ARenameKeepsItAndANewFileOfTheNameIsAnother) {
  TempDir dir;
  dir.WriteFile("output.log", "attempt 1\n");
  const std::string log = dir.path() + "/output.log";
  FileIdentity first = IdentityOf(log);
  EXPECT_EQ(first.size, 10u);
  ASSERT_EQ(std::rename(log.c_str(), (dir.path() + "/output.1.log").c_str()), 0);
  FileIdentity kept = IdentityOf(dir.path() + "/output.1.log");
  EXPECT_EQ(kept.device, first.device);
  EXPECT_EQ(kept.inode, first.inode);
  dir.WriteFile("output.log", "attempt 2\n");
  EXPECT_NE(IdentityOf(log).inode, first.inode);
}

TEST(IdentifiedFile, ReadsTheFileNamedAndRefusesAnother) {
  TempDir dir;
  dir.WriteFile("output.log", "step 1\nstep 2\n");
  const std::string log = dir.path() + "/output.log";
  FileIdentity id = IdentityOf(log);

  Result<IdentifiedFile> file = IdentifiedFile::Open(log, id.device, id.inode);
  ASSERT_TRUE(file.ok()) << file.status().message();
  EXPECT_EQ(ReadIdentified(*file, 7, 100), "step 2\n");
  EXPECT_EQ(ReadIdentified(*file, 14, 100), "");  // at the end: 0, not an error

  Result<IdentifiedFile> other_inode = IdentifiedFile::Open(log, id.device, id.inode + 1);
  ASSERT_FALSE(other_inode.ok());
  EXPECT_EQ(other_inode.status().code(), ErrorCode::kFailedPrecondition);
  Result<IdentifiedFile> other_device = IdentifiedFile::Open(log, id.device + 1, id.inode);
  EXPECT_EQ(other_device.status().code(), ErrorCode::kFailedPrecondition);

  // Replaced under its name (a relaunch moves a log aside, the next run makes one).
  ASSERT_EQ(std::rename(log.c_str(), (dir.path() + "/output.1.log").c_str()), 0);
  dir.WriteFile("output.log", "another run\n");
  EXPECT_EQ(IdentifiedFile::Open(log, id.device, id.inode).status().code(), ErrorCode::kFailedPrecondition);
  // What was opened before stays that file.
  EXPECT_EQ(ReadIdentified(*file, 0, 6), "step 1");
}

TEST(IdentifiedFile, OnlyARegularFileIsOpenedAndNothingBlocks) {
  TempDir dir;
  dir.WriteFile("real.log", "x\n");
  FileIdentity id = IdentityOf(dir.path() + "/real.log");
  EXPECT_EQ(IdentifiedFile::Open(dir.path() + "/missing.log", id.device, id.inode).status().code(),
            ErrorCode::kNotFound);
  const std::string fifo = dir.path() + "/fifo.log";
  ASSERT_EQ(::mkfifo(fifo.c_str(), 0600), 0);
  EXPECT_EQ(IdentifiedFile::Open(fifo, id.device, id.inode).status().code(), ErrorCode::kFailedPrecondition);
  // A link to the very file is not followed, even though it would match.
  const std::string link = dir.path() + "/link.log";
  ASSERT_EQ(::symlink((dir.path() + "/real.log").c_str(), link.c_str()), 0);
  EXPECT_FALSE(IdentifiedFile::Open(link, id.device, id.inode).ok());
}

TEST(BootId, IsThisKernelsUuid) {
  const std::string id = BootId();
  ASSERT_EQ(id.size(), 36u) << "'" << id << "'";
  for (size_t i : {8u, 13u, 18u, 23u}) EXPECT_EQ(id[i], '-') << id;
  EXPECT_EQ(BootId(), id);
}

}  // namespace
}  // namespace gpuctl::sys
