// RemoveTree removes a job's directory and the links a job planted in it,
// never what those links point at.
#include "agents/sys/remove_tree.h"

#include <gtest/gtest.h>

#include <filesystem>

#include "tests/fakes/temp_dir.h"

namespace gpuctl::sys {
namespace {

namespace fs = std::filesystem;
using gpuctl::testing::TempDir;

TEST(RemoveTree, RemovesADirectoryAndEverythingBeneathIt) {
  TempDir dir;
  dir.WriteFile("job/output.log", "log");
  dir.WriteFile("job/ckpt/a/b/weights.bin", "w");
  dir.MakeDir("job/empty");
  ASSERT_TRUE(RemoveTree(dir.path() + "/job").ok());
  EXPECT_FALSE(fs::exists(dir.path() + "/job"));
}

TEST(RemoveTree, RemovesLinksWithoutFollowingThem) {
  TempDir dir;
  dir.WriteFile("outside/keep.txt", "keep");
  dir.WriteFile("job/output.log", "log");
  fs::create_directory_symlink(dir.path() + "/outside", dir.path() + "/job/to_dir");
  fs::create_symlink(dir.path() + "/outside/keep.txt", dir.path() + "/job/to_file");
  ASSERT_TRUE(RemoveTree(dir.path() + "/job").ok());
  EXPECT_FALSE(fs::exists(dir.path() + "/job"));
  EXPECT_TRUE(fs::exists(dir.path() + "/outside/keep.txt"));
}

TEST(RemoveTree, ALinkGivenAsThePathIsRemovedAsALink) {
  TempDir dir;
  dir.WriteFile("outside/keep.txt", "keep");
  fs::create_directory_symlink(dir.path() + "/outside", dir.path() + "/job");
  ASSERT_TRUE(RemoveTree(dir.path() + "/job").ok());
  EXPECT_FALSE(fs::is_symlink(dir.path() + "/job"));
  EXPECT_TRUE(fs::exists(dir.path() + "/outside/keep.txt"));
}

TEST(RemoveTree, AMissingPathIsNotAnError) {
  TempDir dir;
  EXPECT_TRUE(RemoveTree(dir.path() + "/never").ok());
  EXPECT_TRUE(RemoveTree(dir.path() + "/no/such/parent").ok());
}

}  // namespace
}  // namespace gpuctl::sys
