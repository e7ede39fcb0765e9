// Path text as std::filesystem computes it: the client and the daemon call
// these instead of std::filesystem (scripts/check-layers.sh).
#include "agents/sys/paths.h"

#include <gtest/gtest.h>

namespace gpuctl::sys {
namespace {

TEST(ParentDir, IsTheDirectoryPart) {
  EXPECT_EQ(ParentDir("/home/u/.config/gpuctl/nodes.json"), "/home/u/.config/gpuctl");
  EXPECT_EQ(ParentDir("/run/gpuctl.sock"), "/run");
  EXPECT_EQ(ParentDir("/a"), "/");
  EXPECT_EQ(ParentDir("nodes.json"), "");
}

TEST(JoinPath, AddsOneSlashAndAnAbsoluteLeafWins) {
  EXPECT_EQ(JoinPath("/a/b", "c.json"), "/a/b/c.json");
  EXPECT_EQ(JoinPath("/a/b/", "c.json"), "/a/b/c.json");
  EXPECT_EQ(JoinPath("/a", "daemon/gpuctld"), "/a/daemon/gpuctld");
  EXPECT_EQ(JoinPath("/a", "/etc/x"), "/etc/x");
}

TEST(LexicallyAbsolute, ResolvesAgainstTheCwdWithoutTouchingTheDisk) {
  EXPECT_EQ(LexicallyAbsolute("train.py", "/work"), "/work/train.py");
  EXPECT_EQ(LexicallyAbsolute("./a/../b/", "/work"), "/work/b");
  EXPECT_EQ(LexicallyAbsolute("/abs//x/./y", "/work"), "/abs/x/y");
  EXPECT_EQ(LexicallyAbsolute("/", "/work"), "/");
  EXPECT_EQ(LexicallyAbsolute("..", "/"), "/");
}

TEST(AbsolutePath, KeepsAbsolutePathsAndPrefixesTheCwd) {
  Result<std::string> cwd = CurrentDirectory();
  ASSERT_TRUE(cwd.ok()) << cwd.status().ToString();
  EXPECT_EQ(AbsolutePath("/etc/hosts").value_or(""), "/etc/hosts");
  EXPECT_EQ(AbsolutePath("id_ed25519").value_or(""), *cwd + "/id_ed25519");
}

}  // namespace
}  // namespace gpuctl::sys
