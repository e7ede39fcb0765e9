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

// Captured here: a clang -fsanitize=address program at its exit, stopped
// ('t') by LeakSanitizer, and LSan's tracer, a child cloned with CLONE_VM
// but not as a thread, so a process of its own with the same memory. The
// governor once summed both (a 700 MiB fake compile "reached 1.4 GiB") and
// failed a build that fit.
constexpr const char* kSanitizedAtExit =
    "9374 (lsanbig) t 9373 9371 6322 0 -1 4194304 166843 0 0 0 9 43 0 0 20 0 1 0 2630686 21990280634368 142276 "
    "18446744073709551615 94366705426432 94366706204521 140729651273968 0 0 0 0 6 1216 1 0 0 17 0 0 0 0 0 0 "
    "94366706406976 94366706420624 94366982684672 140729651280508 140729651280518 140729651280518 140729651281902 0";
constexpr const char* kLeakSanitizerTracer =
    "9860 (lsanbig) R 9374 9371 6322 0 -1 4194368 52 0 0 0 0 0 0 0 20 0 1 0 2630739 21990280634368 142276 "
    "18446744073709551615 94366705426432 94366706204521 140729651273968 0 0 0 2122054167 6 25167080 0 0 0 0 0 0 0 "
    "0 0 0 94366706406976 94366706420624 94366982684672 140729651280508 140729651280518 140729651280518 "
    "140729651281902 0";

sys::ProcStat Parsed(const char* line, std::string comm) {
  auto stat = sys::ParseProcStat(line);
  EXPECT_TRUE(stat.ok()) << stat.status().ToString();
  sys::ProcStat out = stat.ok() ? *stat : sys::ProcStat{};
  out.comm = std::move(comm);  // named as the compile it stands for
  return out;
}

TEST(GroupCompileTrees, AChildSharingItsParentsMemoryIsCountedOnce) {
  sys::ProcStat compile = Parsed(kSanitizedAtExit, "cc"), tracer = Parsed(kLeakSanitizerTracer, "cc");
  BuildProcesses grouped = GroupCompileTrees({Proc(9373, 1, "make", 10), compile, tracer}, 4096);
  ASSERT_EQ(grouped.trees.size(), 1u);
  EXPECT_EQ(grouped.trees[0].pids, (std::vector<int64_t>{9374, 9860}));
  EXPECT_EQ(grouped.trees[0].rss_bytes, uint64_t{142276} * 4096);

  // Where kcmp(2) can tell, it decides: the same address space though the
  // rss moved between the two reads (counted once), and a forked child of
  // the same layout and rss that is not the same one (summed).
  const uint64_t once = uint64_t{142276} * 4096;
  auto same = [](int64_t, int64_t) { return std::optional<bool>(true); };
  auto other = [](int64_t, int64_t) { return std::optional<bool>(false); };
  auto unknown = [](int64_t, int64_t) { return std::optional<bool>(); };
  sys::ProcStat moved = tracer;
  moved.rss_pages += 300;
  EXPECT_EQ(GroupCompileTrees({compile, moved}, 4096, same).trees.at(0).rss_bytes, once);
  EXPECT_EQ(GroupCompileTrees({compile, tracer}, 4096, other).trees.at(0).rss_bytes, 2 * once);
  EXPECT_EQ(GroupCompileTrees({compile, tracer}, 4096, unknown).trees.at(0).rss_bytes, once);
  EXPECT_EQ(GroupCompileTrees({compile, moved}, 4096, unknown).trees.at(0).rss_bytes, once + static_cast<uint64_t>(moved.rss_pages) * 4096);

  // A child of its own memory (after its exec: another layout) is summed,
  // and kcmp is not asked.
  tracer.start_stack += 4096;
  auto never = [](int64_t, int64_t) -> std::optional<bool> {
    ADD_FAILURE() << "kcmp asked about a child of another layout";
    return true;
  };
  EXPECT_EQ(GroupCompileTrees({compile, tracer}, 4096, never).trees.at(0).rss_bytes, 2 * once);
  EXPECT_EQ(GroupCompileTrees({compile, tracer}, 4096).trees.at(0).rss_bytes, uint64_t{2 * 142276} * 4096);
  // And so is one whose layout the reader could not see.
  compile.start_stack = tracer.start_stack = 0;
  EXPECT_EQ(GroupCompileTrees({compile, tracer}, 4096).trees.at(0).rss_bytes, uint64_t{2 * 142276} * 4096);
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
