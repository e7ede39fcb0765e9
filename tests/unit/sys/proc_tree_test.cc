#include "agents/sys/proc_tree.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>

#include "tests/fakes/temp_dir.h"

namespace gpuctl::sys {
namespace {

using gpuctl::testing::TempDir;

TEST(ProcTree, ListsNumericEntriesInOrder) {
  TempDir dir;
  for (const char* entry : {"proc/12/stat", "proc/3/stat", "proc/self/stat", "proc/meminfo", "proc/1x/stat"}) {
    dir.WriteFile(entry, "");
  }
  auto pids = ListPids(HostFs(dir.path()));
  ASSERT_TRUE(pids.ok()) << pids.status().ToString();
  EXPECT_EQ(*pids, (std::vector<int64_t>{3, 12}));
  TempDir empty;
  EXPECT_EQ(ListPids(HostFs(empty.path())).status().code(), ErrorCode::kNotFound);
}

TEST(ProcTree, ExecutableIsAResolvingExeLink) {
  TempDir dir;
  dir.MakeDir("proc/10");
  dir.MakeDir("proc/2");
  std::filesystem::create_symlink("/usr/bin/python3", dir.path() + "/proc/10/exe");
  HostFs fs(dir.path());
  EXPECT_TRUE(HasExecutable(fs, 10));
  EXPECT_FALSE(HasExecutable(fs, 2)) << "kernel threads have no exe";
  EXPECT_FALSE(HasExecutable(fs, 99));
  EXPECT_TRUE(HasExecutable(HostFs("/"), ::getpid()));
}

}  // namespace
}  // namespace gpuctl::sys
