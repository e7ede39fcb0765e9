#include "agents/guard/process_scan.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <algorithm>

#include "tests/fakes/temp_dir.h"
#include "tests/unit/guard/proc_fixture.h"

namespace gpuctl::guard {
namespace {

using gpuctl::testing::TempDir;
using testing::FixtureProcess;
using testing::kKernelThreadFlags;
using testing::WriteProcess;

// Field 9 (flags, where PF_KTHREAD marks a kernel thread) comes from
// sys::ParseProcStat: tests/unit/sys/proc_stat_flags_test.cc.

TEST(ProcessScan, ReadsOneProcess) {
  TempDir dir;
  WriteProcess(dir, {.pid = 4321, .comm = "python3", .ppid = 100, .state = 'R', .rss_kib = 2 << 20,
                     .oom_score = 812, .oom_score_adj = 200});
  auto p = ReadProcess(sys::HostFs(dir.path()), 4321);
  ASSERT_TRUE(p.ok()) << p.status().ToString();
  EXPECT_EQ(p->pid, 4321);
  EXPECT_EQ(p->ppid, 100);
  EXPECT_EQ(p->comm, "python3");
  EXPECT_EQ(p->state, 'R');
  EXPECT_EQ(p->rss_bytes, uint64_t{2} << 30);
  EXPECT_EQ(p->oom_score, 812);
  EXPECT_EQ(p->oom_score_adj, 200);
  EXPECT_TRUE(p->has_executable);
  EXPECT_FALSE(p->kernel_thread());
}

TEST(ProcessScan, KernelThreadsByFlagOrMissingExe) {
  TempDir dir;
  WriteProcess(dir, {.pid = 2, .comm = "kthreadd", .ppid = 0, .flags = kKernelThreadFlags, .exe = false});
  // A kernel thread seen with an exe link still has PF_KTHREAD.
  WriteProcess(dir, {.pid = 50, .comm = "kworker/0:1", .ppid = 2, .flags = kKernelThreadFlags, .exe = true});
  sys::HostFs fs(dir.path());
  auto kthreadd = ReadProcess(fs, 2);
  ASSERT_TRUE(kthreadd.ok()) << kthreadd.status().ToString();
  EXPECT_TRUE(kthreadd->kernel_thread());
  EXPECT_EQ(kthreadd->rss_bytes, 0u);
  auto worker = ReadProcess(fs, 50);
  ASSERT_TRUE(worker.ok());
  EXPECT_TRUE(worker->kernel_thread());
}

TEST(ProcessScan, NegativeOomScoreAdj) {
  TempDir dir;
  WriteProcess(dir, {.pid = 600, .comm = "sshd", .rss_kib = 8000, .oom_score_adj = -1000});
  auto p = ReadProcess(sys::HostFs(dir.path()), 600);
  ASSERT_TRUE(p.ok()) << p.status().ToString();
  EXPECT_EQ(p->oom_score_adj, -1000);
}

TEST(ProcessScan, GoneOrMalformedProcessesAreErrors) {
  TempDir dir;
  WriteProcess(dir, {.pid = 700, .comm = "bad"});
  dir.WriteFile("proc/700/oom_score", "lots\n");
  sys::HostFs fs(dir.path());
  EXPECT_EQ(ReadProcess(fs, 999).status().code(), ErrorCode::kNotFound);
  EXPECT_EQ(ReadProcess(fs, 700).status().code(), ErrorCode::kInvalidArgument);
}

TEST(ProcessScan, ScanSkipsWhatItCannotRead) {
  TempDir dir;
  WriteProcess(dir, {.pid = 1, .comm = "systemd", .ppid = 0, .rss_kib = 12000});
  WriteProcess(dir, {.pid = 2, .comm = "kthreadd", .ppid = 0, .flags = kKernelThreadFlags, .exe = false});
  WriteProcess(dir, {.pid = 900, .comm = "cc1plus", .rss_kib = 3 << 20, .oom_score = 700});
  dir.WriteFile("proc/901/stat", "901 (half) R 1 901 901 0 -1 0\n");  // exited mid-read
  dir.WriteFile("proc/meminfo", "MemTotal: 1 kB\n");
  auto all = ScanProcesses(sys::HostFs(dir.path()));
  ASSERT_TRUE(all.ok()) << all.status().ToString();
  std::vector<int64_t> pids;
  for (const ProcessInfo& p : *all) pids.push_back(p.pid);
  EXPECT_EQ(pids, (std::vector<int64_t>{1, 2, 900}));
}

TEST(ProcessScan, ReadsTheRealProcSelf) {
  auto self = ReadProcess(sys::HostFs("/"), ::getpid());
  ASSERT_TRUE(self.ok()) << self.status().ToString();
  EXPECT_TRUE(self->has_executable);
  EXPECT_FALSE(self->kernel_thread());
  EXPECT_GT(self->rss_bytes, 0u);
}

}  // namespace
}  // namespace gpuctl::guard
