// GPU memory sampling on its own, through the table, a fake GPU reading and
// the fake clock: a running job's memory by its processes (its group, and a
// worker that left it but stayed in its cgroup), its peak, gpu_memory_high
// once per run, one reading per interval, none while nothing runs.
#include "agents/train/gpu_memory_sampler.h"

#include <gtest/gtest.h>

#include "tests/unit/train/job_parts_fixture.h"
#include "common/units.h"

namespace gpuctl::train {
namespace {

using namespace std::chrono_literals;


class GpuMemorySamplerTest : public test_support::JobPartsFixture {
 protected:
  GpuMemorySamplerTest()
      : sampler_(
            [this] {
              ++reads_;
              return report_;
            },
            1s, procs_) {
    sys::GpuDevice gpu;
    gpu.index = 0;
    gpu.uuid = "GPU-0";
    gpu.memory_total_bytes = 80 * kGiB;
    report_.devices.push_back(gpu);
  }

  // A process of the job's group on GPU 0 using `bytes`.
  void OnGpu(uint32_t pid, int64_t group, uint64_t bytes) {
    procs_.AddProcess(pid, group, 1);
    report_.devices[0].processes.push_back({pid, "python", bytes});
  }

  sys::GpuReport report_;
  int reads_ = 0;
  GpuMemorySampler sampler_;
};

TEST_F(GpuMemorySamplerTest, NothingRunsNothingIsRead) {
  PutEnded(Spec("done"), 5001, JobState::kSucceeded);
  sampler_.Tick(table_, Now());
  EXPECT_EQ(reads_, 0);
}

TEST_F(GpuMemorySamplerTest, AJobsProcessesAreItsMemoryWithThePeakAndOneHighEvent) {
  PutRunning(Spec("llm"), 5001);
  OnGpu(7001, 5001, 70 * kGiB);
  sampler_.Tick(table_, Now());
  const JobEntry& entry = *table_.Find("llm");
  ASSERT_EQ(entry.record.gpu_memory.size(), 1u);
  EXPECT_EQ(entry.record.gpu_memory[0].used_bytes, 70 * kGiB);
  EXPECT_EQ(entry.record.gpu_memory[0].peak_bytes, 70 * kGiB);
  EXPECT_EQ(entry.gpu_pids, (std::set<uint32_t>{7001}));  // told apart as this run's after it ends
  EXPECT_EQ(table_.Snapshot("llm")->gpu_memory.size(), 1u);
  EXPECT_TRUE(events_.empty());

  report_.devices[0].processes[0].used_memory_bytes = 78 * kGiB;  // past 95%
  sampler_.Tick(table_, Now() + 500ms);  // within the interval: not read
  EXPECT_EQ(reads_, 1);
  clock_.Advance(1s);
  sampler_.Tick(table_, Now());
  EXPECT_EQ(reads_, 2);
  EXPECT_EQ(EventKinds(), (std::vector<std::string>{"gpu_memory_high"}));
  EXPECT_EQ(events_[0].fields["gpu"], 0);
  EXPECT_TRUE(store_.Load("llm")->gpu_memory[0].high_reported);  // saved with its event

  report_.devices[0].processes[0].used_memory_bytes = 10 * kGiB;
  clock_.Advance(1s);
  sampler_.Tick(table_, Now());
  EXPECT_EQ(table_.Find("llm")->record.gpu_memory[0].used_bytes, 10 * kGiB);
  EXPECT_EQ(table_.Find("llm")->record.gpu_memory[0].peak_bytes, 78 * kGiB);
  report_.devices[0].processes[0].used_memory_bytes = 79 * kGiB;
  clock_.Advance(1s);
  sampler_.Tick(table_, Now());
  EXPECT_EQ(events_.size(), 1u);  // once per run
}

TEST_F(GpuMemorySamplerTest, AWorkerThatLeftTheGroupIsItsJobsByItsCgroup) {
  JobEntry& entry = PutRunning(Spec("llm"), 5001);
  entry.record.cgroup = "/gpuctl/llm@run-llm";
  OnGpu(7002, 7002, 20 * kGiB);  // setsid: a group of its own
  procs_.SetMemoryCgroup(7002, "/gpuctl/llm@run-llm");
  OnGpu(8000, 8000, 5 * kGiB);  // someone else's
  sampler_.Tick(table_, Now());
  ASSERT_EQ(table_.Find("llm")->record.gpu_memory.size(), 1u);
  EXPECT_EQ(table_.Find("llm")->record.gpu_memory[0].used_bytes, 20 * kGiB);
}

}  // namespace
}  // namespace gpuctl::train
