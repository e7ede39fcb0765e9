#include "agents/sys/cgroup_parsers.h"

#include <gtest/gtest.h>

#include "agents/sys/cgroup_io.h"

namespace gpuctl::sys {
namespace {

TEST(CgroupParsers, NumberWithOrWithoutNewline) {
  EXPECT_EQ(ParseCgroupNumber("4059136\n").value_or(0), 4059136u);
  EXPECT_EQ(ParseCgroupNumber("0").value_or(1), 0u);
  EXPECT_FALSE(ParseCgroupNumber("").ok());
  EXPECT_FALSE(ParseCgroupNumber("-1\n").ok());
  EXPECT_FALSE(ParseCgroupNumber("12 kB").ok());
}

TEST(CgroupParsers, MaxIsNoLimit) {
  auto max = ParseCgroupMax("max\n");
  ASSERT_TRUE(max.ok());
  EXPECT_FALSE(max->has_value());
  auto bytes = ParseCgroupMax("1073741824\n");
  ASSERT_TRUE(bytes.ok());
  EXPECT_EQ(bytes->value_or(0), 1073741824u);
  EXPECT_EQ(ParseCgroupMax("maximum").status().code(), ErrorCode::kInvalidArgument);
}

TEST(CgroupParsers, V1UnlimitedIsPageCounterMax) {
  EXPECT_TRUE(IsV1Unlimited(9223372036854771712u));   // 4 KiB pages
  EXPECT_TRUE(IsV1Unlimited(9223372036854710272u));   // 64 KiB pages
  EXPECT_FALSE(IsV1Unlimited(uint64_t{288} << 30));   // a big host's RAM
}

TEST(CgroupParsers, ProcsOnePidPerLine) {
  auto pids = ParseCgroupProcs("23582\n23583\n27535\n");
  ASSERT_TRUE(pids.ok());
  EXPECT_EQ(*pids, (std::vector<int64_t>{23582, 23583, 27535}));
  EXPECT_TRUE(ParseCgroupProcs("").value_or({1}).empty());
  EXPECT_EQ(ParseCgroupProcs("12\nabc\n").status().code(), ErrorCode::kInvalidArgument);
  EXPECT_FALSE(ParseCgroupProcs("0\n").ok());
}

TEST(CgroupParsers, FlatKeyedReadsEventsAndOomControl) {
  auto events = ParseFlatKeyed("low 0\nhigh 12\nmax 40\noom 2\noom_kill 1\noom_group_kill 0\n");
  ASSERT_TRUE(events.ok());
  EXPECT_EQ(events->at("oom_kill"), 1u);
  EXPECT_EQ(events->at("high"), 12u);
  auto control = ParseFlatKeyed("oom_kill_disable 0\nunder_oom 0\noom_kill 0\n");
  ASSERT_TRUE(control.ok());
  EXPECT_EQ(control->at("oom_kill"), 0u);
  EXPECT_FALSE(ParseFlatKeyed("oom_kill\n").ok());
  EXPECT_FALSE(ParseFlatKeyed("oom_kill 1 2\n").ok());
  EXPECT_FALSE(ParseFlatKeyed("oom_kill x\n").ok());
}

TEST(CgroupParsers, ReclaimableFileIsFilePagesLessDirtyOnes) {
  auto reclaimable = [](std::string_view text) {
    return ReclaimableFileFrom(*ParseFlatKeyed(text), "active_file", "inactive_file", "file_dirty", "file_writeback",
                               "memory.stat");
  };
  EXPECT_EQ(*reclaimable("active_file 300\ninactive_file 200\nfile_dirty 50\nfile_writeback 25\n"), 425u);
  EXPECT_EQ(*reclaimable("active_file 10\ninactive_file 0\nfile_dirty 50\n"), 0u);
  EXPECT_EQ(reclaimable("active_file 10\n").status().code(), ErrorCode::kNotFound);
  // Checked by tests/fuzz/cgroup_files_fuzz: figures near 2^64 used to wrap
  // into a small sum (18446744073709551615 + 2 read as 1 byte).
  EXPECT_EQ(*reclaimable("active_file 18446744073709551615\ninactive_file 2\n"), UINT64_MAX);
  EXPECT_EQ(*reclaimable("active_file 5\ninactive_file 5\nfile_dirty 18446744073709551615\nfile_writeback 1\n"),
            0u);
}

TEST(CgroupParsers, ControllerList) {
  EXPECT_TRUE(ControllerListHas("cpuset cpu io memory pids\n", "memory"));
  EXPECT_FALSE(ControllerListHas("hugetlb\n", "memory"));
  EXPECT_FALSE(ControllerListHas("memoryx", "memory"));
  EXPECT_FALSE(ControllerListHas("", "memory"));
}

TEST(CgroupParsers, JoinKeepsPathsInsideTheMount) {
  EXPECT_EQ(JoinCgroupPath("/sys/fs/cgroup", "/").value_or(""), "/sys/fs/cgroup");
  EXPECT_EQ(JoinCgroupPath("/sys/fs/cgroup/", "/a/b").value_or(""), "/sys/fs/cgroup/a/b");
  EXPECT_EQ(JoinCgroupPath("/m", "/a/").value_or(""), "/m/a");
  for (const char* bad : {"", "a", "/a/../b", "/..", "/a//b", "/./a"}) {
    EXPECT_EQ(JoinCgroupPath("/m", bad).status().code(), ErrorCode::kInvalidArgument) << bad;
  }
}

TEST(CgroupParsers, ParentPath) {
  EXPECT_EQ(ParentCgroupPath("/a/b").value_or(""), "/a");
  EXPECT_EQ(ParentCgroupPath("/a").value_or(""), "/");
  EXPECT_EQ(ParentCgroupPath("/a/b/").value_or(""), "/a");
  EXPECT_FALSE(ParentCgroupPath("/").ok());
}

}  // namespace
}  // namespace gpuctl::sys

namespace gpuctl::sys {
namespace {

TEST(StripCgroupMountTest, TakesTheDirectoryOrThePathUnderTheHierarchy) {
  EXPECT_EQ(StripCgroupMount("/sys/fs/cgroup/memory/lxc/c1", "/sys/fs/cgroup/memory"), "/lxc/c1");
  EXPECT_EQ(StripCgroupMount("/sys/fs/cgroup/lxc.payload.200", "/sys/fs/cgroup/"), "/lxc.payload.200");
  EXPECT_EQ(StripCgroupMount("/sys/fs/cgroup/memory", "/sys/fs/cgroup/memory"), "/");
  EXPECT_EQ(StripCgroupMount("/lxc/c1", "/sys/fs/cgroup/memory"), "/lxc/c1");
  EXPECT_EQ(StripCgroupMount("/sys/fs/cgroup/memoryx/a", "/sys/fs/cgroup/memory"), "/sys/fs/cgroup/memoryx/a");
  EXPECT_EQ(StripCgroupMount("/a", "/"), "/a");
}

}  // namespace
}  // namespace gpuctl::sys
