// Relaunches from the last complete checkpoint, through the table and a fake
// starter: a hang's stop under recover and a failure under --on-fail recover
// are relaunched with --resume-arg naming the newest complete checkpoint
// (never a partial one), OOMs and users' stops are left alone, and runs that
// leave no newer checkpoint are given up on.
#include "agents/train/checkpoint_relaunch.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <filesystem>

#include "common/event_kinds.h"
#include "tests/unit/train/job_parts_fixture.h"

namespace gpuctl::train {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;

class CheckpointRelaunchTest : public test_support::JobPartsFixture {
 protected:
  CheckpointRelaunchTest() : starter_(table_), relaunches_(starter_) {
    ckpt_ = dir_.path() + "/ckpt";
    std::filesystem::create_directories(ckpt_);
  }

  JobSpec Recovering(const std::string& name) {
    JobSpec spec = Spec(name);
    spec.on_fail = OnFail::kRecover;
    spec.checkpoint.dir = ckpt_;
    spec.checkpoint.resume_arg = "--resume_from_checkpoint={checkpoint}";
    return spec;
  }

  // An HF checkpoint-N, complete or cut short by the crash.
  void HfCheckpoint(int step, bool complete) {
    std::string dir = ckpt_ + "/checkpoint-" + std::to_string(step);
    dir_.WriteFile("ckpt/checkpoint-" + std::to_string(step) + "/model.safetensors", "weights");
    if (complete) dir_.WriteFile("ckpt/checkpoint-" + std::to_string(step) + "/trainer_state.json", "{}");
  }

  std::string Canonical(const std::string& path) { return std::filesystem::canonical(path).string(); }

  test_support::FakeStarter starter_;
  CheckpointRelaunch relaunches_;
  std::string ckpt_;
};

TEST_F(CheckpointRelaunchTest, AFailureUnderRecoverResumesFromTheNewestCompleteCheckpoint) {
  HfCheckpoint(100, true);
  HfCheckpoint(200, true);
  HfCheckpoint(300, false);  // the save the crash cut short
  JobEntry& entry = PutEnded(Recovering("llm"), 6001, JobState::kFailed);
  entry.record.state_reason = "killed by signal 9";
  dir_.WriteFile("state/jobs/llm/output.log", "step 250\n");
  relaunches_.Tick(table_, Now());
  ASSERT_EQ(starter_.calls.size(), 1u);
  const test_support::FakeStarter::Call& call = starter_.calls[0];
  const std::string expected = Canonical(ckpt_ + "/checkpoint-200");
  EXPECT_EQ(call.spec.resume_from, expected);
  EXPECT_EQ(call.spec.attempt, 2u);
  EXPECT_THAT(EffectiveCommand(call.spec),
              ElementsAre("python", "train.py", "--resume_from_checkpoint=" + expected));
  EXPECT_EQ(EffectiveEnv(call.spec).at("GPUCTL_RESUME_FROM"), expected);
  ASSERT_EQ(call.lineage.attempts.size(), 1u);
  EXPECT_EQ(call.lineage.attempts[0].state_reason, "killed by signal 9");
  EXPECT_THAT(call.lineage.attempts[0].log_path, HasSubstr("output.log.run-llm"));
  EXPECT_THAT(EventKinds(), ElementsAre(event_kind::kJobRelaunched));
  EXPECT_EQ(events_[0].fields["cause"], "failure");
  EXPECT_EQ(events_[0].fields["checkpoint"], expected);
  // Decided once.
  relaunches_.Tick(table_, Now());
  EXPECT_EQ(starter_.calls.size(), 1u);
}

TEST_F(CheckpointRelaunchTest, NoCompleteCheckpointRelaunchesFromScratch) {
  HfCheckpoint(300, false);
  PutEnded(Recovering("fresh"), 6002, JobState::kFailed);
  relaunches_.Tick(table_, Now());
  ASSERT_EQ(starter_.calls.size(), 1u);
  EXPECT_EQ(starter_.calls[0].spec.resume_from, "");
  EXPECT_THAT(EffectiveCommand(starter_.calls[0].spec), ElementsAre("python", "train.py"));
  EXPECT_THAT(starter_.calls[0].lineage.attempts[0].changes.at(0), HasSubstr("from scratch"));
}

TEST_F(CheckpointRelaunchTest, AHangStopIsRelaunchedEvenWithoutOnFail) {
  HfCheckpoint(100, true);
  JobSpec spec = Recovering("hung");
  spec.on_fail = OnFail::kFail;
  JobEntry& entry = PutEnded(spec, 6003, JobState::kFailed);
  entry.record.stop_requested = true;
  entry.record.relaunch_after_stop = true;
  relaunches_.Tick(table_, Now());
  ASSERT_EQ(starter_.calls.size(), 1u);
  EXPECT_EQ(events_.at(0).fields["cause"], "hang");
}

TEST_F(CheckpointRelaunchTest, AGpuFaultPlacesAJobAgainPastTheQueue) {
  HfCheckpoint(100, true);
  JobSpec spec = Recovering("placed");
  spec.on_fail = OnFail::kFail;
  spec.num_gpus = 1;
  spec.gpus = "0";  // what the queue chose
  JobEntry& entry = PutEnded(spec, 6011, JobState::kFailed);
  entry.record.stop_requested = true;
  entry.record.relaunch_after_stop = true;
  entry.record.agent_stop_cause = "gpu_fault";
  relaunches_.Tick(table_, Now());
  ASSERT_EQ(starter_.calls.size(), 1u);
  EXPECT_FALSE(starter_.calls[0].admitted) << "through the queue, which leaves the drained GPU out";
  EXPECT_EQ(starter_.calls[0].spec.gpus, "");
  EXPECT_EQ(starter_.calls[0].spec.num_gpus, 1u);
  EXPECT_EQ(events_.at(0).fields["cause"], "gpu_fault");
  EXPECT_THAT(starter_.calls[0].lineage.attempts[0].changes.back(), HasSubstr("were 0"));
}

TEST_F(CheckpointRelaunchTest, UsersStopsOomsAndOtherPoliciesAreLeftAlone) {
  JobEntry& stopped = PutEnded(Recovering("stopped"), 6004, JobState::kFailed);
  stopped.record.stop_requested = true;
  JobSpec plain = Recovering("plain");
  plain.on_fail = OnFail::kFail;
  PutEnded(plain, 6005, JobState::kFailed);
  JobEntry& oom = PutEnded(Recovering("oom"), 6006, JobState::kFailed);
  LogEvent e;
  e.kind = std::string(event_kind::kCudaOom);
  oom.record.events.push_back({e, 0});
  PutEnded(Recovering("ok"), 6007, JobState::kSucceeded);
  relaunches_.Tick(table_, Now());
  EXPECT_TRUE(starter_.calls.empty());
  EXPECT_FALSE(CheckpointRelaunch::Pending(table_.Find("plain")->record));
}

TEST_F(CheckpointRelaunchTest, RelaunchesThatLeaveNoNewerCheckpointAreGivenUpOn) {
  HfCheckpoint(100, true);
  const std::string ckpt = Canonical(ckpt_ + "/checkpoint-100");
  // Attempt 2 started from checkpoint-100 and died before saving another.
  JobSpec spec = Recovering("loop");
  spec.attempt = 2;
  spec.resume_from = ckpt;
  spec.checkpoint.max_restarts_without_progress = 2;
  PutEnded(spec, 6008, JobState::kFailed);
  relaunches_.Tick(table_, Now());
  ASSERT_EQ(starter_.calls.size(), 1u);
  EXPECT_EQ(starter_.calls[0].lineage.restarts_without_progress, 1u);
  // Attempt 3 too: the second relaunch in a row without progress gives up.
  JobSpec third = starter_.calls[0].spec;
  table_.Erase("loop");
  JobEntry& again = PutEnded(third, 6009, JobState::kFailed);
  again.record.restarts_without_progress = 1;
  relaunches_.Tick(table_, Now());
  EXPECT_EQ(starter_.calls.size(), 1u);
  EXPECT_EQ(EventKinds().back(), event_kind::kJobGaveUp);
  EXPECT_THAT(table_.Find("loop")->record.state_reason, HasSubstr("gave up relaunching"));
  // A newer checkpoint resets the count.
  HfCheckpoint(200, true);
  table_.Erase("loop");
  JobEntry& progressed = PutEnded(third, 6010, JobState::kFailed);
  progressed.record.restarts_without_progress = 1;
  relaunches_.Tick(table_, Now());
  ASSERT_EQ(starter_.calls.size(), 2u);
  EXPECT_EQ(starter_.calls[1].lineage.restarts_without_progress, 0u);
  EXPECT_EQ(starter_.calls[1].spec.resume_from, Canonical(ckpt_ + "/checkpoint-200"));
}

}  // namespace
}  // namespace gpuctl::train
