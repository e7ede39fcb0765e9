// train rm's checks beyond "ended": the run asked for (train rm --ended lists,
// then removes) and a relaunch still to come.
#include <gtest/gtest.h>

#include "agents/train/removal_check.h"
#include "common/event_kinds.h"

namespace gpuctl::train {
namespace {

JobRecord EndedRun(const std::string& name, const std::string& run_id, JobState state) {
  JobRecord record;
  record.spec.name = name;
  record.run_id = run_id;
  record.state = state;
  record.state_reason = "exited 1";
  return record;
}

TEST(CheckRemoval, ARunOtherThanTheOneListedIsLeft) {
  const JobRecord rerun = EndedRun("eval", "20261205-010000-00000002", JobState::kSucceeded);
  EXPECT_TRUE(CheckRemoval(rerun, "").ok()) << "train rm NAME removes whatever run it is";
  EXPECT_TRUE(CheckRemoval(rerun, "20261205-010000-00000002").ok());
  Status refused = CheckRemoval(rerun, "20261205-005900-00000001");
  EXPECT_EQ(refused.code(), ErrorCode::kFailedPrecondition);
  EXPECT_NE(refused.message().find("started again"), std::string::npos) << refused.message();
}

TEST(CheckRemoval, AFailedRunAboutToBeRelaunchedIsLeft) {
  JobRecord oomed = EndedRun("llm", "20261205-010000-00000003", JobState::kFailed);
  oomed.spec.oom.recover = true;
  LogEvent oom;
  oom.kind = std::string(kCudaOom);
  oomed.events.push_back({oom, 0});
  Status refused = CheckRemoval(oomed, oomed.run_id);
  EXPECT_EQ(refused.code(), ErrorCode::kFailedPrecondition);
  EXPECT_NE(refused.message().find("about to be relaunched"), std::string::npos) << refused.message();
  oomed.oom_decided = true;  // relaunched (a new run holds the name) or given up
  EXPECT_TRUE(CheckRemoval(oomed, oomed.run_id).ok());
  JobRecord plain = EndedRun("plain", "20261205-010000-00000004", JobState::kFailed);
  plain.events = oomed.events;  // an OOM without --on-oom recover: nothing to come
  EXPECT_TRUE(CheckRemoval(plain, "").ok());
}

}  // namespace
}  // namespace gpuctl::train
