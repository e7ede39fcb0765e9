// Reconciliation on its own, through the table: at start the records are
// loaded and published, a tmux session no record claims is adopted as
// orphaned (saved, with its event), a session of another run beside a live
// one is left alone, and a run that ended while no agent watched is settled.
#include "agents/train/reconciliation.h"

#include <gtest/gtest.h>

#include "tests/unit/train/job_parts_fixture.h"

namespace gpuctl::train {
namespace {

class ReconciliationTest : public test_support::JobPartsFixture {
 protected:
  ReconciliationTest() : reconciliation_(tmux_, launcher_, monitor_, unreadable_, guard_) {}

  // A record on disk, as an agent before this one left it.
  void Recorded(const std::string& name, JobState state, int64_t pid) {
    ASSERT_TRUE(store_.Prepare(name).ok());
    JobRecord r;
    r.spec = Spec(name);
    r.run_id = "run-" + name;
    r.state = state;
    r.tmux_session = "gpuctl-" + name;
    r.pid = r.pgid = pid;
    r.created_unix_ms = r.started_unix_ms = table_.NowMs();
    r.log_path = store_.LogPath(name);
    r.exit_path = store_.ExitPath(name);
    ASSERT_TRUE(store_.Save(r).ok());
  }

  Reconciliation reconciliation_;
};

TEST_F(ReconciliationTest, RecordsAreLoadedPublishedAndGuarded) {
  Recorded("live", JobState::kRunning, 5001);
  procs_.AddProcess(5001, 5001, 1);
  Recorded("old", JobState::kSucceeded, 0);
  reconciliation_.OnStart(table_);
  EXPECT_EQ(table_.Names(), (std::vector<std::string>{"live", "old"}));
  ASSERT_NE(table_.Snapshot("old"), nullptr);
  EXPECT_EQ(table_.Snapshot("live")->state, JobState::kRunning);
  ASSERT_EQ(guard_.RunningJobs().size(), 1u);
  EXPECT_EQ(guard_.RunningJobs()[0].name, "live");
}

TEST_F(ReconciliationTest, ARunThatEndedWhileNoAgentWatchedIsSettled) {
  Recorded("gone", JobState::kRunning, 5001);  // its processes are gone
  dir_.WriteFile("state/jobs/gone/exit_status", "0\n");
  reconciliation_.OnStart(table_);
  EXPECT_EQ(table_.Find("gone")->record.state, JobState::kSucceeded);
  EXPECT_EQ(store_.Load("gone")->state, JobState::kSucceeded);
  EXPECT_EQ(EventKinds(), (std::vector<std::string>{"job_ended"}));
}

TEST_F(ReconciliationTest, ASessionNoRecordClaimsIsAdoptedAsOrphaned) {
  tmux_.AddSession("gpuctl-ghost");
  tmux_.SetSessionEnvironment("gpuctl-ghost", "GPUCTL_RUN_ID", "r1");
  tmux_.SetPanePid("gpuctl-ghost", 6001);
  procs_.AddProcess(6001, 6001, 1);
  tmux_.AddSession("someone-elses");
  reconciliation_.OnStart(table_);
  ASSERT_NE(table_.Find("ghost"), nullptr);
  const JobRecord& r = table_.Find("ghost")->record;
  EXPECT_EQ(r.state, JobState::kOrphaned);
  EXPECT_EQ(r.run_id, "r1");
  EXPECT_EQ(r.pid, 6001);  // watched and stoppable, never invisible
  EXPECT_EQ(store_.Load("ghost")->state, JobState::kOrphaned);
  EXPECT_EQ(table_.Find("someone-elses"), nullptr);
  ASSERT_FALSE(events_.empty());
  EXPECT_EQ(events_[0].kind, "job_orphaned");
}

TEST_F(ReconciliationTest, AnotherRunsSessionBesideALiveRunIsLeftAlone) {
  Recorded("busy", JobState::kRunning, 5001);
  procs_.AddProcess(5001, 5001, 1);
  tmux_.AddSession("gpuctl-busy");
  tmux_.SetSessionEnvironment("gpuctl-busy", "GPUCTL_RUN_ID", "another");
  reconciliation_.OnStart(table_);
  EXPECT_EQ(table_.Find("busy")->record.run_id, "run-busy");
  EXPECT_EQ(table_.Find("busy")->record.state, JobState::kRunning);
}

}  // namespace
}  // namespace gpuctl::train
