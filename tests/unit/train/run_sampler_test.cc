// A run's processes from a fixture proc tree: its process group's, its
// cgroup's, every descendant of those (torchrun's workers in sessions of
// their own), never another run's; CPU time, state, argv and RANK read.
#include "agents/train/run_sampler.h"

#include <gtest/gtest.h>

#include <string>

#include "tests/fakes/fake_clock.h"
#include "tests/fakes/temp_dir.h"

namespace gpuctl::train {
namespace {

class ProcRunSamplerTest : public ::testing::Test {
 protected:
  // proc/PID/stat as the kernel writes it (fields 1-24), with the fields
  // the sampler reads set.
  void Process(int64_t pid, int64_t ppid, int64_t pgrp, char state, uint64_t utime, const std::string& argv0,
               const std::string& environ = "") {
    const std::string dir = "proc/" + std::to_string(pid);
    dir_.WriteFile(dir + "/stat", std::to_string(pid) + " (" + argv0 + ") " + state + " " + std::to_string(ppid) +
                                      " " + std::to_string(pgrp) + " " + std::to_string(pgrp) +
                                      " 0 -1 4194304 100 0 0 0 " + std::to_string(utime) + " 5 0 0 20 0 1 0 " +
                                      std::to_string(1000 + pid) + " 1000000 250\n");
    dir_.WriteFile(dir + "/cmdline", argv0 + std::string(1, '\0') + "train.py" + std::string(1, '\0'));
    dir_.WriteFile(dir + "/environ", environ);
  }

  testing::TempDir dir_;
  testing::FakeClock clock_;
};

TEST_F(ProcRunSamplerTest, TheRunsGroupAndEveryDescendantAndNothingElse) {
  Process(100, 1, 100, 'S', 1, "sh");                                            // the wrapper, group 100
  Process(101, 100, 100, 'S', 50, "torchrun");                                   // in its group
  Process(102, 101, 102, 'R', 700, "python", std::string("RANK=0\0X=1", 10));    // a worker, its own session
  Process(103, 101, 103, 'T', 300, "python", std::string("A=1\0RANK=1\0", 11));  // another, stopped
  Process(200, 1, 200, 'S', 9, "other");                                         // another job
  Process(201, 200, 201, 'S', 9, "python", std::string("RANK=0", 6));
  sys::HostFs fs(dir_.path());
  ProcRunSampler sampler(fs, nullptr, clock_);
  JobRecord r;
  r.pid = r.pgid = 100;
  r.pid_start_time = 1100;
  std::vector<RunProcess> found = sampler.Sample(r, /*details=*/true);
  ASSERT_EQ(found.size(), 4u);
  EXPECT_EQ(found[2].pid, 102);
  EXPECT_EQ(found[2].cpu_ticks, 705u);
  EXPECT_EQ(found[2].rank, 0);
  EXPECT_EQ(found[3].state, 'T');
  EXPECT_EQ(found[3].rank, 1);
  EXPECT_EQ(found[3].argv, (std::vector<std::string>{"python", "train.py"}));
  EXPECT_FALSE(found[0].rank);
  // Without details: no argv, no rank (a sample each second reads only stat).
  std::vector<RunProcess> quick = sampler.Sample(r, /*details=*/false);
  ASSERT_EQ(quick.size(), 4u);
  EXPECT_TRUE(quick[2].argv.empty());
}

TEST_F(ProcRunSamplerTest, OneScanServesASecondRunAndExpires) {
  Process(100, 1, 100, 'S', 1, "sh");
  sys::HostFs fs(dir_.path());
  ProcRunSampler sampler(fs, nullptr, clock_);
  JobRecord a;
  a.pid = a.pgid = 100;
  JobRecord b;
  b.pid = b.pgid = 300;
  EXPECT_EQ(sampler.Sample(a, false).size(), 1u);
  Process(300, 1, 300, 'S', 1, "sh");  // started after the scan
  EXPECT_EQ(sampler.Sample(b, false).size(), 0u) << "the scan of a moment ago serves";
  clock_.Advance(ProcRunSampler::kScanReuse);
  EXPECT_EQ(sampler.Sample(b, false).size(), 1u);
}

TEST_F(ProcRunSamplerTest, AReusedWrapperPidIsNotTheRunsAndExitedProcessesAreNot) {
  Process(100, 1, 100, 'Z', 1, "sh");  // the run's wrapper, a zombie
  Process(150, 1, 150, 'S', 1, "bash");
  sys::HostFs fs(dir_.path());
  ProcRunSampler sampler(fs, nullptr, clock_);
  JobRecord r;
  r.pid = 150;  // recorded with another start time: the pid was reused
  r.pid_start_time = 42;
  r.pgid = 100;
  EXPECT_TRUE(sampler.Sample(r, false).empty());
}

}  // namespace
}  // namespace gpuctl::train
