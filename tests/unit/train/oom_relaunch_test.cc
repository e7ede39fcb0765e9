// OOM relaunch on its own, through the table and a fake starter: a failed
// run with CUDA OOM and --on-oom recover is decided on once, relaunched with
// its lineage and its log kept aside, or given up on; a relaunch past its
// last attempt's step says the change held.
#include "agents/train/oom_relaunch.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <filesystem>

#include "tests/unit/train/job_parts_fixture.h"

namespace gpuctl::train {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;

class OomRelaunchTest : public test_support::JobPartsFixture {
 protected:
  OomRelaunchTest() : starter_(table_), ooms_(starter_) {}

  static JobSpec Recovering(const std::string& name) {
    JobSpec spec = Spec(name);
    spec.command = {"python", "train.py", "--max-anchors", "1024"};
    spec.oom.recover = true;
    spec.gpus = "0";
    return spec;
  }

  // A run that failed with a CUDA OOM, its log read to the end.
  JobEntry& FailedWithOom(JobSpec spec) {
    JobEntry& entry = PutEnded(std::move(spec), 5001, JobState::kFailed);
    dir_.WriteFile("state/jobs/" + entry.record.spec.name + "/output.log", "step 40\nCUDA out of memory\n");
    LogEvent oom;
    oom.kind = std::string(kCudaOom);
    oom.message = "torch.OutOfMemoryError: CUDA out of memory.";
    oom.gpu = 0;
    entry.record.events.push_back({oom, table_.NowMs()});
    entry.record.metrics.step = 40;
    return entry;
  }

  test_support::FakeStarter starter_;
  OomRelaunch ooms_;
};

TEST_F(OomRelaunchTest, AnOomRunIsRelaunchedOnceWithItsLineage) {
  FailedWithOom(Recovering("llm"));
  ooms_.Tick(table_, Now());
  ASSERT_EQ(starter_.calls.size(), 1u);
  const test_support::FakeStarter::Call& call = starter_.calls[0];
  EXPECT_TRUE(call.admitted);  // on its own GPUs, past the queue
  EXPECT_EQ(call.spec.attempt, 2u);
  EXPECT_EQ(call.spec.alloc_conf, "expandable_segments:True");
  EXPECT_EQ(call.spec.gpus, "0");
  ASSERT_EQ(call.lineage.attempts.size(), 1u);
  EXPECT_EQ(call.lineage.attempts[0].run_id, "run-llm");
  EXPECT_EQ(call.lineage.attempts[0].step, 40u);
  EXPECT_EQ(call.lineage.hold_step, 40u);
  // The ended attempt's log is kept aside under its run id.
  EXPECT_EQ(call.lineage.attempts[0].log_path, store_.LogPath("llm") + ".run-llm");
  EXPECT_TRUE(std::filesystem::exists(store_.LogPath("llm") + ".run-llm"));
  EXPECT_EQ(EventKinds(), (std::vector<std::string>{"oom_remediation"}));

  ooms_.Tick(table_, Now());  // the relaunch runs: nothing more to decide
  EXPECT_EQ(starter_.calls.size(), 1u);
}

TEST_F(OomRelaunchTest, ARelaunchThatCannotStartIsNotRetriedInALoop) {
  FailedWithOom(Recovering("llm"));
  starter_.status = FailedPrecondition("container 200 is stopped");
  ooms_.Tick(table_, Now());
  ooms_.Tick(table_, Now());
  EXPECT_EQ(starter_.calls.size(), 1u);
  EXPECT_TRUE(table_.Find("llm")->record.oom_decided);
}

TEST_F(OomRelaunchTest, NothingIsDecidedWhileTheLogIsBehindOrWithoutRecover) {
  JobEntry& behind = FailedWithOom(Recovering("behind"));
  behind.record.log_bytes = behind.record.parsed_offset + 100;  // the OOM may be in lines not read yet
  JobSpec failing = Recovering("failing");
  failing.oom.recover = false;
  FailedWithOom(failing);
  JobEntry& stopped = FailedWithOom(Recovering("stopped"));
  stopped.record.stop_requested = true;
  ooms_.Tick(table_, Now());
  EXPECT_TRUE(starter_.calls.empty());
  EXPECT_TRUE(OomRelaunch::Pending(behind.record));  // its GPUs stay held meanwhile
}

TEST_F(OomRelaunchTest, RetriesUsedGiveUp) {
  JobSpec spec = Recovering("tired");
  spec.oom.retries = 1;
  spec.attempt = 2;
  FailedWithOom(spec);
  ooms_.Tick(table_, Now());
  EXPECT_TRUE(starter_.calls.empty());
  const JobRecord& r = table_.Find("tired")->record;
  EXPECT_TRUE(r.oom_decided);
  EXPECT_THAT(r.state_reason, HasSubstr("; OOM remediation gave up: "));
  EXPECT_EQ(EventKinds(), (std::vector<std::string>{"oom_gave_up"}));
  EXPECT_EQ(table_.Snapshot("tired")->oom_decided, true);
}

TEST_F(OomRelaunchTest, ARelaunchPastItsLastStepSaysTheChangeHeld) {
  JobEntry& entry = PutRunning(Recovering("llm"), 5001);
  entry.record.spec.attempt = 2;
  entry.record.hold_step = 40;
  entry.record.metrics.step = 40;
  EXPECT_FALSE(ooms_.OnRefresh(table_, entry, table_.NowMs()));
  entry.record.metrics.step = 41;
  EXPECT_TRUE(ooms_.OnRefresh(table_, entry, table_.NowMs()));
  EXPECT_FALSE(entry.record.hold_step.has_value());
  ASSERT_EQ(events_.size(), 1u);
  EXPECT_EQ(events_[0].kind, "oom_remediation_held");
  EXPECT_EQ(events_[0].fields["last_attempt_step"], 40);
  EXPECT_EQ(events_[0].fields["run_id"], "run-llm");
}

}  // namespace
}  // namespace gpuctl::train
