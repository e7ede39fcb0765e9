// Runs, records and reconciliation: what the supervisor promises across
// agent restarts, kill -9 mid-start, orphans, unreadable records, removals
// and guard kills, over fakes and a fake clock.
#include <gtest/gtest.h>
#include <signal.h>

#include <thread>

#include "tests/unit/train/job_supervisor_fixture.h"

namespace gpuctl::train {
namespace {

using test_support::ReadAll;
using test_support::WriteText;
using namespace std::chrono_literals;

class JobRunsTest : public test_support::JobSupervisorFixture {
 protected:
  // The agent is killed (no Shutdown of jobs: they keep running).
  void KillAgent() { supervisor_.reset(); }
};

TEST_F(JobRunsTest, EveryRunHasItsOwnIdInRecordSessionAndEvents) {
  std::vector<nlohmann::json> events;
  auto options = Options();
  options.publish = [&](std::string kind, std::string, std::string, nlohmann::json fields) {
    events.push_back({{"kind", kind}, {"run_id", fields.value("run_id", "")}});
  };
  supervisor_ = std::make_unique<JobSupervisor>(options, tmux_, procs_, runner_, clock_);
  supervisor_->Start();
  JobRecord first = StartOk(Spec("r"));
  EndJob(first, "0\n");
  ASSERT_EQ(Get("r").state, JobState::kSucceeded);
  JobRecord second = StartOk(Spec("r"));
  EXPECT_NE(first.run_id, second.run_id);
  EXPECT_EQ(OnDisk("r").run_id, second.run_id);
  EXPECT_EQ(Get("r").run_id, second.run_id) << "a rerun is never shown as the run before it";
  ASSERT_GE(events.size(), 3u);
  EXPECT_EQ(events[0], (nlohmann::json{{"kind", "job_started"}, {"run_id", first.run_id}}));
  EXPECT_EQ(events[1], (nlohmann::json{{"kind", "job_ended"}, {"run_id", first.run_id}}));
  EXPECT_EQ(events[2], (nlohmann::json{{"kind", "job_started"}, {"run_id", second.run_id}}));
}

// kill -9 after the record was saved, before tmux ran anything.
TEST_F(JobRunsTest, ARunRecordedButNeverLaunchedIsSettledNotHidden) {
  JobRecord record;
  record.spec = Spec("half");
  record.run_id = "20250101-000000-0000abcd";
  record.state = JobState::kStarting;
  record.tmux_session = "gpuctl-half";
  record.log_path = store_.LogPath("half");
  record.exit_path = store_.ExitPath("half");
  ASSERT_TRUE(store_.Prepare("half").ok());
  ASSERT_TRUE(store_.Save(record).ok());
  JobRecord r = Get("half");
  EXPECT_EQ(r.state, JobState::kFailed);
  EXPECT_NE(r.state_reason.find("never launched"), std::string::npos) << r.state_reason;
  EXPECT_EQ(StartOk(Spec("half")).state, JobState::kRunning) << "the name is free again";
}

// A launch the killed agent had in flight lands after the new agent looked:
// the run stays "starting" for a while, and is adopted when its session
// (with its run id) shows up; with none, it is called never launched.
TEST_F(JobRunsTest, ALaunchLandingAfterTheRestartIsAdopted) {
  for (const char* name : {"late", "never"}) {
    JobRecord record;
    record.spec = Spec(name);
    record.run_id = std::string("20250101-000000-") + (name[0] == 'l' ? "0000000a" : "0000000b");
    record.state = JobState::kStarting;
    record.tmux_session = std::string("gpuctl-") + name;
    record.created_unix_ms = NowMs();
    record.log_path = store_.LogPath(name);
    record.exit_path = store_.ExitPath(name);
    ASSERT_TRUE(store_.Prepare(name).ok());
    ASSERT_TRUE(store_.Save(record).ok());
  }
  EXPECT_EQ(Get("late").state, JobState::kStarting);
  EXPECT_EQ(Get("never").state, JobState::kStarting);
  tmux_.AddSession("gpuctl-late");
  tmux_.SetPanePid("gpuctl-late", 8001);
  tmux_.SetSessionEnvironment("gpuctl-late", "GPUCTL_RUN_ID", "20250101-000000-0000000a");
  procs_.AddProcess(8001, 8001, 1);
  EXPECT_EQ(Get("late").state, JobState::kRunning);
  EXPECT_EQ(Get("late").pid, 8001);
  clock_.Advance(11s);
  JobRecord never = Get("never");
  EXPECT_EQ(never.state, JobState::kFailed);
  EXPECT_NE(never.state_reason.find("never launched"), std::string::npos);
}

// kill -9 after tmux started the run, before its pid was saved.
TEST_F(JobRunsTest, ARunLaunchedButNotYetMarkedRunningIsAdopted) {
  JobRecord started = StartOk(Spec("mid"));
  KillAgent();
  JobRecord record = OnDisk("mid");
  record.state = JobState::kStarting;
  record.pid = record.pgid = 0;
  ASSERT_TRUE(store_.Save(record).ok());
  JobRecord r = Get("mid");
  EXPECT_EQ(r.state, JobState::kRunning);
  EXPECT_EQ(r.pid, started.pid);
  EXPECT_EQ(r.run_id, started.run_id);
}

TEST_F(JobRunsTest, ASessionNoRecordClaimsIsAdoptedAsOrphaned) {
  tmux_.AddSession("gpuctl-stray");
  tmux_.SetPanePid("gpuctl-stray", 7001);
  tmux_.SetSessionEnvironment("gpuctl-stray", "GPUCTL_RUN_ID", "20250101-000000-00000001");
  procs_.AddProcess(7001, 7001, 1);
  tmux_.AddSession("someone-else");  // not ours: left alone
  JobRecord r = Get("stray");
  EXPECT_EQ(r.state, JobState::kOrphaned);
  EXPECT_EQ(r.pid, 7001);
  EXPECT_EQ(r.run_id, "20250101-000000-00000001");
  EXPECT_NE(r.state_reason.find("no record"), std::string::npos);
  EXPECT_EQ(OnDisk("stray").state, JobState::kOrphaned);
  EXPECT_EQ(Supervisor().RunningJobs().size(), 1u) << "the guard sees it";
  EXPECT_EQ(Supervisor().StartJob(Spec("stray")).status().code(), ErrorCode::kAlreadyExists);
  EXPECT_EQ(Supervisor().ListJobs().size(), 1u);
  // It can be stopped like any job, and then ends.
  Result<JobRecord> stopped = Supervisor().StopJob("stray", 1s);
  ASSERT_TRUE(stopped.ok());
  EXPECT_EQ(stopped->state, JobState::kStopped);
}

TEST_F(JobRunsTest, AnUnreadableRecordIsListedAndBlocksItsNameUntilRemoved) {
  WriteText(store_.JobDir("broken") + "/job.json", "{\"spec\": {\"name\": \"../../escape\"}}");
  JobRecord r = Get("broken");
  EXPECT_EQ(r.state, JobState::kUnreadable);
  EXPECT_NE(r.state_reason.find("gpuctl train rm broken"), std::string::npos) << r.state_reason;
  ASSERT_EQ(Supervisor().ListJobs().size(), 1u);
  Result<JobRecord> refused = Supervisor().StartJob(Spec("broken"));
  EXPECT_EQ(refused.status().code(), ErrorCode::kAlreadyExists);
  EXPECT_EQ(ReadAll(store_.JobDir("broken") + "/job.json"), "{\"spec\": {\"name\": \"../../escape\"}}")
      << "never overwritten";
  ASSERT_TRUE(Supervisor().RemoveJob("broken").ok());
  EXPECT_FALSE(std::filesystem::exists(store_.JobDir("broken")));
  EXPECT_EQ(StartOk(Spec("broken")).state, JobState::kRunning);
}

// A running job whose record was truncated, found at agent start: stop
// still stops what runs (by its session and run id), and rm refuses while it
// lives instead of deleting a live job's log.
TEST_F(JobRunsTest, AnUnreadableRecordOfALiveRunIsStoppedAndNotRemovedWhileItRuns) {
  JobRecord started = StartOk(Spec("cut"));
  procs_.SetReaction(started.pgid, testing::FakeProcessControl::Reaction::kDiesOnSigkill);
  KillAgent();
  WriteText(store_.JobDir("cut") + "/job.json", "{\"spec\": {\"na");  // truncated
  JobRecord r = Get("cut");
  EXPECT_EQ(r.state, JobState::kUnreadable);
  EXPECT_EQ(r.run_id, started.run_id) << "found by its session";
  EXPECT_EQ(r.pid, started.pid);
  EXPECT_NE(r.state_reason.find("still running"), std::string::npos) << r.state_reason;

  Result<JobRecord> refused = Supervisor().RemoveJob("cut");
  EXPECT_EQ(refused.status().code(), ErrorCode::kFailedPrecondition);
  EXPECT_NE(refused.status().message().find("stop it first"), std::string::npos) << refused.status().message();
  EXPECT_TRUE(std::filesystem::exists(store_.LogPath("cut"))) << "a live job's log is kept";

  // SIGTERM, then SIGKILL at the end of the grace (the job traps SIGTERM).
  std::thread advance([&] {
    test_support::WaitFor([&] { return !procs_.signals().empty(); });
    clock_.Advance(3s);
  });
  Result<JobRecord> stopped = Supervisor().StopJob("cut", 2s);
  advance.join();
  ASSERT_TRUE(stopped.ok()) << stopped.status().message();
  EXPECT_EQ(stopped->state, JobState::kUnreadable);
  EXPECT_FALSE(stopped->stop_requested);
  EXPECT_NE(stopped->state_reason.find("was stopped"), std::string::npos) << stopped->state_reason;
  ASSERT_FALSE(procs_.signals().empty());
  EXPECT_EQ(procs_.signals().front().sig, SIGTERM);
  EXPECT_EQ(procs_.signals().back().sig, SIGKILL);
  EXPECT_FALSE(procs_.GroupAlive(started.pgid));
  EXPECT_EQ(ReadAll(store_.JobDir("cut") + "/job.json"), "{\"spec\": {\"na") << "never overwritten";
  EXPECT_TRUE(Supervisor().RemoveJob("cut").ok());
}

TEST_F(JobRunsTest, RemoveRefusesARunningJobAndForgetsAnEndedOne) {
  JobRecord started = StartOk(Spec("rm"));
  EXPECT_EQ(Supervisor().RemoveJob("rm").status().code(), ErrorCode::kFailedPrecondition);
  EndJob(started, "0\n");
  Result<JobRecord> removed = Supervisor().RemoveJob("rm");
  ASSERT_TRUE(removed.ok()) << removed.status().message();
  EXPECT_EQ(removed->run_id, started.run_id);
  EXPECT_EQ(Supervisor().GetJob("rm").status().code(), ErrorCode::kNotFound);
  EXPECT_FALSE(std::filesystem::exists(store_.JobDir("rm")));
  EXPECT_EQ(Supervisor().RemoveJob("rm").status().code(), ErrorCode::kNotFound);
}

// The agent dies during a stop's grace: the stop is saved with its
// deadline, and the next agent finishes it with SIGKILL.
TEST_F(JobRunsTest, AStopInterruptedByARestartIsFinished) {
  JobRecord started = StartOk(Spec("stubborn"));
  procs_.SetReaction(started.pgid, testing::FakeProcessControl::Reaction::kDiesOnSigkill);
  {
    JobRecord record = OnDisk("stubborn");
    record.stop_requested = true;
    record.stop_deadline_unix_ms = NowMs() + 5000;
    ASSERT_TRUE(store_.Save(record).ok());
  }
  KillAgent();
  EXPECT_EQ(Get("stubborn").state, JobState::kRunning);  // within its grace
  clock_.Advance(6s);                                     // the owner wakes at the deadline
  ASSERT_TRUE(test_support::WaitFor([&] { return Get("stubborn").state == JobState::kStopped; }));
  EXPECT_EQ(procs_.signals().back().sig, SIGKILL);
}

// A kill marked for one run never labels the next run of the same name.
TEST_F(JobRunsTest, AGuardKillBelongsToItsRun) {
  JobRecord first = StartOk(Spec("g"));
  Supervisor().MarkKilledByGuard(first.run_id, "killed by the memory guard: test");
  EndJob(first, "137\n");
  EXPECT_EQ(Get("g").state, JobState::kKilledByGuard);
  JobRecord second = StartOk(Spec("g"));
  Supervisor().MarkKilledByGuard(first.run_id, "a late mark for the old run");
  EndJob(second, "0\n");
  EXPECT_EQ(Get("g").state, JobState::kSucceeded);
}

}  // namespace
}  // namespace gpuctl::train
