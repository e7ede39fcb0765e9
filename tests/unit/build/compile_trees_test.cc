#include "agents/build/compile_trees.h"

#include <gtest/gtest.h>

namespace gpuctl::build {
namespace {

sys::ProcStat Proc(int64_t pid, int64_t ppid, std::string comm, int64_t rss_pages, char state = 'S') {
  sys::ProcStat stat;
  stat.pid = pid;
  stat.ppid = ppid;
  stat.comm = std::move(comm);
  stat.rss_pages = rss_pages;
  stat.state = state;
  stat.start_time_ticks = static_cast<uint64_t>(pid) * 10;
  return stat;
}

// What ps showed of a real `nvcc --threads 2` compile here: nvcc -> sh -> cicc.
TEST(GroupCompileTrees, AnNvccTreeHoldsItsShellsAndStages) {
  BuildProcesses grouped = GroupCompileTrees(
      {Proc(100, 1, "ninja", 10), Proc(101, 100, "sh", 1), Proc(102, 101, "nvcc", 2), Proc(103, 102, "sh", 1),
       Proc(104, 103, "cicc", 500), Proc(105, 102, "sh", 1), Proc(106, 105, "cicc", 400), Proc(110, 100, "sh", 1),
       Proc(111, 110, "g++", 2), Proc(112, 111, "cc1plus", 50)},
      4096);
  ASSERT_EQ(grouped.trees.size(), 2u);
  const CompileTree& nvcc = grouped.trees[0];
  EXPECT_EQ(nvcc.root_pid, 102);
  EXPECT_EQ(nvcc.program, "nvcc");
  EXPECT_EQ(nvcc.root_start_ticks, 1020u);
  EXPECT_EQ(nvcc.pids, (std::vector<int64_t>{102, 103, 104, 105, 106}));
  EXPECT_EQ(nvcc.rss_bytes, uint64_t{2 + 1 + 500 + 1 + 400} * 4096);
  EXPECT_EQ(grouped.trees[1].program, "g++");
  EXPECT_EQ(grouped.trees[1].rss_bytes, uint64_t{52} * 4096);
  // ninja and the shells above the compilers.
  EXPECT_EQ(grouped.other_rss_bytes, uint64_t{10 + 1 + 1} * 4096);
}

TEST(GroupCompileTrees, ATreeWantsACoreForEachRunningMember) {
  // nvcc --threads 2: two cicc on a CPU, the driver and shells asleep.
  BuildProcesses grouped = GroupCompileTrees({Proc(102, 1, "nvcc", 2), Proc(103, 102, "sh", 1),
                                              Proc(104, 103, "cicc", 500, 'R'), Proc(105, 102, "sh", 1),
                                              Proc(106, 105, "cicc", 400, 'R'), Proc(107, 102, "ptxas", 9, 'D')},
                                             4096);
  ASSERT_EQ(grouped.trees.size(), 1u);
  EXPECT_EQ(grouped.trees[0].busy, 2u);
}

TEST(GroupCompileTrees, ALoneStageWhoseParentLeftIsItsOwnTree) {
  BuildProcesses grouped = GroupCompileTrees({Proc(200, 1, "ptxas", 300), Proc(201, 999, "cicc", 100)}, 4096);
  ASSERT_EQ(grouped.trees.size(), 2u);
  EXPECT_EQ(grouped.trees[0].program, "ptxas");
  EXPECT_EQ(grouped.trees[1].program, "cicc");
}

TEST(GroupCompileTrees, ATreeIsStoppedOnlyWhenEveryMemberIs) {
  BuildProcesses some = GroupCompileTrees({Proc(1, 0, "nvcc", 1, 'T'), Proc(2, 1, "cicc", 1, 'R')}, 4096);
  EXPECT_FALSE(some.trees.at(0).stopped);
  BuildProcesses all = GroupCompileTrees({Proc(1, 0, "nvcc", 1, 'T'), Proc(2, 1, "cicc", 1, 't')}, 4096);
  EXPECT_TRUE(all.trees.at(0).stopped);
}

TEST(GroupCompileTrees, ZombiesAndCyclesCannotHurt) {
  // A zombie holds no memory; a (bad) parent cycle must not loop forever.
  BuildProcesses grouped = GroupCompileTrees(
      {Proc(1, 2, "nvcc", 5), Proc(2, 1, "cicc", 7), Proc(3, 1, "ptxas", 100, 'Z'), Proc(4, 4, "make", 3)}, 4096);
  uint64_t total = grouped.other_rss_bytes;
  for (const CompileTree& tree : grouped.trees) total += tree.rss_bytes;
  EXPECT_EQ(total, uint64_t{5 + 7 + 3} * 4096);
}

}  // namespace
}  // namespace gpuctl::build
