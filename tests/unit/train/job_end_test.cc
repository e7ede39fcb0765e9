// How a run ended, as a table: each row is what was known when its
// processes were gone, and the state, reason and exit figures decided.
#include "agents/train/job_end.h"

#include <gtest/gtest.h>

#include <optional>
#include <string>
#include <vector>

namespace gpuctl::train {
namespace {

using ReadingKind = ExitStatusReading::Kind;

ExitStatusReading Value(int v) { return {ReadingKind::kValue, v, ""}; }
ExitStatusReading Missing() { return {}; }
ExitStatusReading Garbage() { return {ReadingKind::kUnreadable, 0, "'0abc' is not an exit status"}; }

using Text = std::optional<std::string>;

// Every fact named, in order (a designated initializer that leaves some
// out trips -Wmissing-field-initializers).
RunEndFacts F(ExitStatusReading exit, bool stop = false, Text guard = {}, Text failure = {}, bool never = false,
              Text disk_full = {}) {
  RunEndFacts facts;
  facts.exit = std::move(exit);
  facts.stop_requested = stop;
  facts.guard_kill_reason = std::move(guard);
  facts.failure = std::move(failure);
  facts.never_seen_launched = never;
  facts.disk_full = std::move(disk_full);
  return facts;
}

struct Row {
  const char* what;
  RunEndFacts facts;
  JobState state;
  std::string reason;
  std::optional<int> exit_code;
  std::optional<int> term_signal;
};

const std::string kLost =
    "its processes are gone and no exit status was written (killed with SIGKILL, or the host rebooted)";
const std::string kFull = "the disk holding /s/jobs/a is full (12.0 KiB free), so its log is cut short";

TEST(DecideRunEnd, EachCaseAsATable) {
  const std::vector<Row> rows = {
      {"exit 0", F(Value(0)), JobState::kSucceeded, "exited 0", 0, std::nullopt},
      {"exit 3", F(Value(3)), JobState::kFailed, "exited 3", 3, std::nullopt},
      {"exit 127", F(Value(127)), JobState::kFailed, "exited 127: command not found", 127, std::nullopt},
      {"exit 126", F(Value(126)), JobState::kFailed, "exited 126: not executable", 126, std::nullopt},
      {"a signal", F(Value(137)), JobState::kFailed, "killed by signal 9", 137, 9},
      {"garbage", F(Garbage()), JobState::kFailed,
       "ended, but its exit status is unreadable: '0abc' is not an exit status", std::nullopt, std::nullopt},
      {"no status", F(Missing()), JobState::kLost, kLost, std::nullopt, std::nullopt},
      {"a stop's 143", F(Value(143), true), JobState::kStopped, "stopped by request", 143, 15},
      {"the guard", F(Missing(), false, "memory 95%"), JobState::kKilledByGuard, "memory 95%",
       std::nullopt, std::nullopt},
      {"the governor", F(Value(137), false, {}, "build over its budget"), JobState::kFailed,
       "build over its budget", 137, 9},
      {"the governor, exit 0", F(Value(0), false, {}, "build over its budget"), JobState::kFailed,
       "build over its budget", 0, std::nullopt},
      {"a stop beats the governor", F(Value(143), true, {}, "over budget"),
       JobState::kStopped, "stopped by request", 143, 15},
      {"the guard beats the governor", F(Missing(), false, "memory", "over budget"),
       JobState::kKilledByGuard, "memory", std::nullopt, std::nullopt},
      {"never launched", F(Missing(), false, {}, {}, true), JobState::kFailed,
       "never launched: the agent stopped while starting it", std::nullopt, std::nullopt},
      {"never launched beats a stop", F(Missing(), true, {}, {}, true),
       JobState::kFailed, "never launched: the agent stopped while starting it", std::nullopt, std::nullopt},
      {"unseen launch that left a status", F(Value(0), false, {}, {}, true), JobState::kSucceeded,
       "exited 0", 0, std::nullopt},
      {"full disk, no status", F(Missing(), false, {}, {}, false, kFull), JobState::kLost,
       "its processes are gone and no exit status could be recorded: " + kFull, std::nullopt, std::nullopt},
      {"full disk, a status", F(Value(1), false, {}, {}, false, kFull), JobState::kFailed, "exited 1; " + kFull, 1,
       std::nullopt},
      {"full disk, never launched", F(Missing(), false, {}, {}, true, kFull),
       JobState::kFailed, "its processes are gone and no exit status could be recorded: " + kFull, std::nullopt,
       std::nullopt},
  };
  for (const Row& row : rows) {
    SCOPED_TRACE(row.what);
    JobEnd end = DecideRunEnd(row.facts);
    EXPECT_EQ(end.state, row.state);
    EXPECT_EQ(end.reason, row.reason);
    EXPECT_EQ(end.exit_code, row.exit_code);
    EXPECT_EQ(end.term_signal, row.term_signal);
  }
}

RunEndFacts MemKill(ExitStatusReading exit, uint64_t limit, bool from_flag) {
  RunEndFacts facts = F(std::move(exit));
  facts.mem_limit_kill = RunEndFacts::MemLimitKill{.limit_bytes = limit, .from_flag = from_flag};
  return facts;
}

TEST(DecideRunEnd, AKillByTheRunsOwnMemoryLimitIsNamed) {
  constexpr uint64_t kMiB = 1024 * 1024;
  JobEnd end = DecideRunEnd(MemKill(Value(137), 200 * kMiB, true));
  EXPECT_EQ(end.state, JobState::kFailed);
  EXPECT_EQ(end.reason, "exceeded --mem-limit 200 MiB: killed by signal 9");
  EXPECT_EQ(DecideRunEnd(MemKill(Value(1), 8192 * kMiB, false)).reason,
            "exceeded the agent's default memory limit 8.0 GiB: exited 1");
  // A stop or the guard explains the end: the limit is not the story.
  RunEndFacts stopped = MemKill(Value(143), 200 * kMiB, true);
  stopped.stop_requested = true;
  EXPECT_EQ(DecideRunEnd(stopped).reason, "stopped by request");
  RunEndFacts guarded = MemKill(Value(137), 200 * kMiB, true);
  guarded.guard_kill_reason = "memory 95%";
  EXPECT_EQ(DecideRunEnd(guarded).reason, "memory 95%");
  EXPECT_EQ(DecideRunEnd(MemKill(Value(0), 200 * kMiB, true)).state, JobState::kSucceeded);
}

TEST(JobEnded, OneEventWhoeverEndedTheRun) {
  JobRecord failed;
  failed.state = JobState::kFailed;
  failed.state_reason = "exited 1";
  failed.exit_code = 1;
  JobEndedEvent e = JobEnded(failed);
  EXPECT_EQ(std::string(e.kind), "job_ended");
  EXPECT_EQ(e.message, "failed: exited 1");
  EXPECT_EQ(e.fields, (nlohmann::json{{"state", "failed"}, {"exit_code", 1}}));

  JobRecord cancelled;  // a queued job stopped: no exit status
  cancelled.state = JobState::kStopped;
  cancelled.state_reason = "cancelled while queued (waiting for GPU 0)";
  JobEndedEvent c = JobEnded(cancelled);
  EXPECT_EQ(c.message, "stopped: cancelled while queued (waiting for GPU 0)");
  EXPECT_EQ(c.fields, (nlohmann::json{{"state", "stopped"}, {"exit_code", nullptr}}));

  JobRecord guarded;
  guarded.state = JobState::kKilledByGuard;
  guarded.state_reason = "memory";
  guarded.exit_code = 137;
  EXPECT_EQ(JobEnded(guarded).fields, (nlohmann::json{{"state", JobStateName(JobState::kKilledByGuard)},
                                                       {"exit_code", 137}}));
}

}  // namespace
}  // namespace gpuctl::train
