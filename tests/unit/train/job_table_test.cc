// The job table on its own: entries by name, readers' snapshots published
// only when asked, the metrics-only save every 2 s on the fake clock, events
// with their run id, and waits for a job's end that a publish or the
// agent's stop ends.
#include "agents/train/job_table.h"

#include <gtest/gtest.h>

#include <thread>

#include "tests/unit/train/job_parts_fixture.h"

namespace gpuctl::train {
namespace {

using namespace std::chrono_literals;

class JobTableTest : public test_support::JobPartsFixture {};

TEST_F(JobTableTest, EntriesByNameReplacedAndErased) {
  PutRunning(Spec("b"), 5001);
  PutRunning(Spec("a"), 5002);
  EXPECT_EQ(table_.Names(), (std::vector<std::string>{"a", "b"}));
  JobRecord rerun = table_.Find("a")->record;
  rerun.run_id = "second";
  table_.Put(rerun);
  EXPECT_EQ(table_.Find("a")->record.run_id, "second");
  EXPECT_EQ(table_.Snapshot("a")->run_id, "run-a");  // not published yet
  table_.Erase("a");
  EXPECT_EQ(table_.Find("a"), nullptr);
  EXPECT_EQ(table_.Snapshot("a"), nullptr);
  EXPECT_EQ(table_.Names(), (std::vector<std::string>{"b"}));
}

TEST_F(JobTableTest, ReadersSeeWhatWasPublishedOldestFirst) {
  JobEntry& late = PutRunning(Spec("late"), 5001);
  late.record.created_unix_ms = 200;
  table_.Publish(late);
  JobEntry& early = PutRunning(Spec("early"), 5002);
  early.record.created_unix_ms = 100;
  table_.Publish(early);
  std::vector<JobRecord> all = table_.SnapshotAll();
  ASSERT_EQ(all.size(), 2u);
  EXPECT_EQ(all[0].spec.name, "early");
  late.record.state_reason = "changed";
  EXPECT_EQ(table_.Snapshot("late")->state_reason, "running");
  table_.Publish(late);
  EXPECT_EQ(table_.Snapshot("late")->state_reason, "changed");
}

TEST_F(JobTableTest, ProgressAloneIsSavedEveryTwoSeconds) {
  JobEntry& entry = PutRunning(Spec("p"), 5001);  // saved now
  EXPECT_FALSE(table_.ProgressSaveDue(entry, table_.NowMs() + 5000));  // nothing moved
  entry.record.parsed_offset = 100;
  clock_.Advance(1900ms);
  EXPECT_FALSE(table_.ProgressSaveDue(entry, table_.NowMs()));
  clock_.Advance(100ms);
  EXPECT_TRUE(table_.ProgressSaveDue(entry, table_.NowMs()));
  ASSERT_TRUE(table_.Save(entry).ok());
  EXPECT_FALSE(table_.ProgressSaveDue(entry, table_.NowMs() + 5000));
  EXPECT_EQ(store_.Load("p")->parsed_offset, 100u);
}

TEST_F(JobTableTest, EventsCarryTheRunId) {
  JobEntry& entry = PutRunning(Spec("e"), 5001);
  table_.PublishEvent("job_started", entry.record, "started", nullptr);
  ASSERT_EQ(events_.size(), 1u);
  EXPECT_EQ(events_[0].job, "e");
  EXPECT_EQ(events_[0].fields["run_id"], "run-e");
}

TEST_F(JobTableTest, AWaitForTheEndEndsWithTheEndOrTheAgentsStop) {
  JobEntry& entry = PutRunning(Spec("w"), 5001);
  std::thread ender([&] {
    std::this_thread::sleep_for(20ms);
    entry.record.state = JobState::kStopped;
    table_.Publish(entry);
  });
  table_.WaitForEnd("w", Now() + 1h);  // the fake clock never gets there
  ender.join();
  EXPECT_EQ(table_.Snapshot("w")->state, JobState::kStopped);

  PutRunning(Spec("x"), 5002);
  std::thread stopper([&] {
    std::this_thread::sleep_for(20ms);
    table_.ReleaseWaiters();
  });
  table_.WaitForEnd("x", Now() + 1h);
  stopper.join();
  EXPECT_TRUE(IsActive(table_.Snapshot("x")->state));
  table_.WaitForEnd("x", Now() + 1h);  // and every wait after it
}

}  // namespace
}  // namespace gpuctl::train
