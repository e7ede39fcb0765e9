// --state's words, and what "ended" means to train wait and train rm --ended.
#include <gtest/gtest.h>

#include "client/commands/train_subcommands.h"
#include "client/exit_codes.h"
#include "client/job_state_filter.h"

namespace gpuctl::client {
namespace {

v1::Job JobIn(const std::string& name, v1::JobState state) {
  v1::Job job;
  job.mutable_spec()->set_name(name);
  job.set_state(state);
  return job;
}

TEST(ParseJobStates, TakesTheWordsTheListingsShow) {
  Result<std::set<v1::JobState>> states = ParseJobStates("running,queued, failed ,killed_by_guard");
  ASSERT_TRUE(states.ok()) << states.status().message();
  EXPECT_EQ(*states, (std::set<v1::JobState>{v1::JOB_STATE_RUNNING, v1::JOB_STATE_QUEUED, v1::JOB_STATE_FAILED,
                                             v1::JOB_STATE_KILLED_BY_GUARD}));
  // Every word offered is accepted.
  for (const std::string& word : JobStateWords()) EXPECT_TRUE(ParseJobStates(word).ok()) << word;
}

TEST(ParseJobStates, AnUnknownWordIsRefusedListingTheValidOnes) {
  Result<std::set<v1::JobState>> bad = ParseJobStates("running,finished");
  ASSERT_FALSE(bad.ok());
  EXPECT_EQ(bad.status().code(), ErrorCode::kInvalidArgument);
  EXPECT_NE(bad.status().message().find("'finished'"), std::string::npos) << bad.status().message();
  EXPECT_NE(bad.status().message().find("queued, starting, running, succeeded"), std::string::npos);
  EXPECT_FALSE(ParseJobStates(",").ok());
  EXPECT_FALSE(ParseJobStates("Running").ok());  // as shown: lower case
}

TEST(KeepJobsInStates, KeepsOnlyThoseAskedForInOrder) {
  v1::ListJobsResponse list;
  *list.add_jobs() = JobIn("a", v1::JOB_STATE_RUNNING);
  *list.add_jobs() = JobIn("b", v1::JOB_STATE_FAILED);
  *list.add_jobs() = JobIn("c", v1::JOB_STATE_QUEUED);
  *list.add_jobs() = JobIn("d", v1::JOB_STATE_RUNNING);
  v1::ListJobsResponse all = list;
  KeepJobsInStates(all, {});
  EXPECT_EQ(all.jobs_size(), 4);
  KeepJobsInStates(list, {v1::JOB_STATE_RUNNING, v1::JOB_STATE_QUEUED});
  ASSERT_EQ(list.jobs_size(), 3);
  EXPECT_EQ(list.jobs(0).spec().name(), "a");
  EXPECT_EQ(list.jobs(1).spec().name(), "c");
  EXPECT_EQ(list.jobs(2).spec().name(), "d");
}

TEST(JobEndedForGood, NotWhileARelaunchIsPending) {
  for (v1::JobState live : {v1::JOB_STATE_QUEUED, v1::JOB_STATE_STARTING, v1::JOB_STATE_RUNNING}) {
    EXPECT_FALSE(JobEndedForGood(JobIn("j", live))) << live;
  }
  for (v1::JobState ended : {v1::JOB_STATE_SUCCEEDED, v1::JOB_STATE_FAILED, v1::JOB_STATE_STOPPED,
                             v1::JOB_STATE_LOST, v1::JOB_STATE_KILLED_BY_GUARD}) {
    EXPECT_TRUE(JobEndedForGood(JobIn("j", ended))) << ended;
    EXPECT_TRUE(JobRemovableAsEnded(JobIn("j", ended))) << ended;
  }
  v1::Job oomed = JobIn("j", v1::JOB_STATE_FAILED);
  oomed.set_relaunch_pending(true);  // --on-oom recover, about to relaunch
  EXPECT_FALSE(JobEndedForGood(oomed));
  EXPECT_FALSE(JobRemovableAsEnded(oomed));
  // Ended, but not for rm --ended to take: evidence, or a session that may run.
  EXPECT_FALSE(JobRemovableAsEnded(JobIn("j", v1::JOB_STATE_UNREADABLE)));
  EXPECT_FALSE(JobRemovableAsEnded(JobIn("j", v1::JOB_STATE_ORPHANED)));
}

TEST(WaitExitCodeFor, OnlySuccessIsZero) {
  EXPECT_EQ(WaitExitCodeFor(JobIn("j", v1::JOB_STATE_SUCCEEDED)), kExitOk);
  for (v1::JobState other : {v1::JOB_STATE_FAILED, v1::JOB_STATE_STOPPED, v1::JOB_STATE_LOST,
                             v1::JOB_STATE_KILLED_BY_GUARD, v1::JOB_STATE_ORPHANED, v1::JOB_STATE_UNREADABLE}) {
    EXPECT_EQ(WaitExitCodeFor(JobIn("j", other)), kExitFailure) << other;
  }
}

}  // namespace
}  // namespace gpuctl::client
