// The GPU queue on its own, through the table, a fake GPU reading, a fake
// starter and the fake clock: a start placed on a free GPU, queued behind a
// job holding it, refused when no wait helps; admitted when the GPU frees,
// at most one pass per 200 ms; failed with its reason when its turn's start
// fails.
#include "agents/train/gpu_queue.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "tests/unit/train/job_parts_fixture.h"
#include "common/units.h"

namespace gpuctl::train {
namespace {

using ::testing::HasSubstr;
using namespace std::chrono_literals;


class GpuQueueTest : public test_support::JobPartsFixture {
 protected:
  GpuQueueTest()
      : starter_(table_),
        queue_(
            table_,
            [this] {
              ++reads_;
              return report_;
            },
            kGiB, procs_, starter_) {
    sys::GpuDevice gpu;
    gpu.index = 0;
    gpu.uuid = "GPU-0";
    gpu.memory_total_bytes = 80 * kGiB;
    gpu.memory_free_bytes = 80 * kGiB;
    gpu.memory_used_bytes = 0;
    report_.devices.push_back(gpu);
  }

  static JobSpec OneGpu(const std::string& name) {
    JobSpec spec = Spec(name);
    spec.num_gpus = 1;
    return spec;
  }

  std::optional<Result<JobRecord>> Place(JobSpec& spec) {
    Lineage lineage;
    return queue_.Place(spec, lineage, 0);
  }

  sys::GpuReport report_;
  int reads_ = 0;
  test_support::FakeStarter starter_;
  GpuQueue queue_;
};

TEST_F(GpuQueueTest, AFreeGpuIsGivenAtTheStart) {
  JobSpec spec = OneGpu("a");
  EXPECT_FALSE(Place(spec).has_value());  // start now
  EXPECT_EQ(spec.gpus, "0");
}

TEST_F(GpuQueueTest, AJobThatAsksForNoGpuIsNotRead) {
  JobSpec spec = Spec("cpu");
  EXPECT_FALSE(Place(spec).has_value());
  EXPECT_EQ(reads_, 0);
}

TEST_F(GpuQueueTest, NoWaitHelpsAJobThatAsksForMoreThanTheHostHas) {
  JobSpec spec = OneGpu("greedy");
  spec.num_gpus = 2;
  std::optional<Result<JobRecord>> answer = Place(spec);
  ASSERT_TRUE(answer.has_value());
  EXPECT_EQ(answer->status().code(), ErrorCode::kInvalidArgument);
  EXPECT_EQ(table_.Find("greedy"), nullptr);
}

TEST_F(GpuQueueTest, QueuedBehindTheHolderThenAdmittedWhenItEnds) {
  JobSpec holder = OneGpu("holder");
  holder.gpus = "0";
  JobEntry& running = PutRunning(holder, 5001);

  JobSpec spec = OneGpu("next");
  std::optional<Result<JobRecord>> answer = Place(spec);
  ASSERT_TRUE(answer.has_value());
  ASSERT_TRUE(answer->ok()) << answer->status().message();
  EXPECT_EQ((*answer)->state, JobState::kQueued);
  EXPECT_EQ((*answer)->waiting_for, "1 GPU: GPU 0 held by job holder");
  EXPECT_EQ((*answer)->queue_position, 1u);
  EXPECT_EQ(store_.Load("next")->state, JobState::kQueued);  // durable
  EXPECT_EQ(table_.Snapshot("next")->queue_position, 1u);
  EXPECT_EQ(EventKinds(), (std::vector<std::string>{"job_queued"}));
  EXPECT_TRUE(starter_.calls.empty());

  running.record.state = JobState::kSucceeded;  // the holder ended
  const int reads = reads_;
  queue_.Tick(table_, Now());  // within 200 ms of the last pass: not yet
  EXPECT_EQ(reads_, reads);
  EXPECT_TRUE(starter_.calls.empty());

  clock_.Advance(GpuQueue::kAdmitInterval);
  queue_.Tick(table_, Now());
  ASSERT_EQ(starter_.calls.size(), 1u);
  EXPECT_EQ(starter_.calls[0].spec.name, "next");
  EXPECT_EQ(starter_.calls[0].spec.gpus, "0");
  EXPECT_TRUE(starter_.calls[0].admitted);
  EXPECT_EQ(table_.Find("next")->record.state, JobState::kRunning);
}

TEST_F(GpuQueueTest, ANewStartWaitsBehindTheQueuedOfItsPriority) {
  JobSpec holder = OneGpu("holder");
  holder.gpus = "0";
  JobEntry& running = PutRunning(holder, 5001);
  JobSpec first = OneGpu("first");
  ASSERT_TRUE(Place(first).has_value());
  running.record.state = JobState::kSucceeded;
  // The GPU is free, yet 'first' came before: 'second' queues.
  JobSpec second = OneGpu("second");
  std::optional<Result<JobRecord>> answer = Place(second);
  ASSERT_TRUE(answer.has_value() && answer->ok());
  // Its place is taken at once: the pass at its queueing admitted 'first'.
  ASSERT_EQ(starter_.calls.size(), 1u);
  EXPECT_EQ(starter_.calls[0].spec.name, "first");
  EXPECT_EQ(table_.Find("second")->record.state, JobState::kQueued);
  EXPECT_EQ(table_.Find("second")->record.waiting_for, "1 GPU: GPU 0 held by job first");
}

TEST_F(GpuQueueTest, AQueuedJobWhoseStartFailsAtItsTurnFailsWithTheReason) {
  JobSpec holder = OneGpu("holder");
  holder.gpus = "0";
  JobEntry& running = PutRunning(holder, 5001);
  JobSpec spec = OneGpu("doomed");
  ASSERT_TRUE(Place(spec).has_value());
  running.record.state = JobState::kSucceeded;
  starter_.status = InvalidArgument("script /x is gone");
  clock_.Advance(1s);
  queue_.Tick(table_, Now());
  const JobRecord& r = table_.Find("doomed")->record;
  EXPECT_EQ(r.state, JobState::kFailed);
  EXPECT_EQ(r.state_reason, "could not start from the queue: script /x is gone");
  EXPECT_EQ(store_.Load("doomed")->state, JobState::kFailed);
  EXPECT_EQ(events_.back().kind, "job_ended");
}

TEST_F(GpuQueueTest, AnOomRunAboutToBeRelaunchedKeepsItsGpus) {
  JobSpec oom = OneGpu("oom");
  oom.gpus = "0";
  oom.oom.recover = true;
  JobEntry& failed = PutEnded(oom, 5001, JobState::kFailed);
  LogEvent e;
  e.kind = std::string(kCudaOom);
  failed.record.events.push_back({e, table_.NowMs()});
  JobSpec spec = OneGpu("other");
  std::optional<Result<JobRecord>> answer = Place(spec);
  ASSERT_TRUE(answer.has_value() && answer->ok());
  EXPECT_THAT((*answer)->waiting_for, HasSubstr("GPU 0 held by job oom"));
}

}  // namespace
}  // namespace gpuctl::train
