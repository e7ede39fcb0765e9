// `train status` tells what the run really got (run_command, run_env), why a
// failed run failed (its last log lines, escaped), and counts what earlier
// attempts saw; a queued job has no pid, a reason is said once.
#include <gtest/gtest.h>

#include "client/output/job_json.h"
#include "client/output/job_text.h"

namespace gpuctl::client {
namespace {

constexpr int64_t kStartedAt = 1764530000000;

v1::Job AnchoredJob() {
  v1::Job job;
  v1::JobSpec* spec = job.mutable_spec();
  spec->set_name("a768");
  for (const char* arg : {"python3", "fake.py", "--max-anchors", "1024"}) spec->add_command(arg);
  spec->set_anchors(768);
  for (const char* arg : {"python3", "fake.py", "--max-anchors", "768"}) job.add_run_command(arg);
  (*job.mutable_run_env())["GPUCTL_RUN_ID"] = "r2";
  (*job.mutable_run_env())["CUDA_VISIBLE_DEVICES"] = "0";
  job.set_state(v1::JOB_STATE_RUNNING);
  job.set_state_reason("running");
  job.set_pid(4242);
  job.set_pgid(4242);
  job.set_started_unix_ms(kStartedAt);
  return job;
}

std::vector<std::string> TextLines(const std::string& text) {
  std::vector<std::string> lines;
  size_t start = 0;
  while (start < text.size()) {
    size_t end = text.find('\n', start);
    if (end == std::string::npos) end = text.size();
    lines.push_back(text.substr(start, end - start));
    start = end + 1;
  }
  return lines;
}

bool HasLine(const std::string& text, const std::string& line) {
  for (const std::string& l : TextLines(text)) {
    if (l == line) return true;
  }
  return false;
}

TEST(JobTruthText, WhatTheRunGotBesideWhatWasAsked) {
  std::string text = JobToText(AnchoredJob(), kStartedAt + 1000);
  EXPECT_TRUE(HasLine(text, "command:    python3 fake.py --max-anchors 1024")) << text;
  EXPECT_TRUE(HasLine(text, "run command: python3 fake.py --max-anchors 768")) << text;
  // Sorted by name, one line each.
  EXPECT_NE(text.find("run env:    CUDA_VISIBLE_DEVICES=0\n            GPUCTL_RUN_ID=r2\n"), std::string::npos)
      << text;
  v1::Job same = AnchoredJob();
  same.clear_run_command();
  for (const std::string& arg : same.spec().command()) same.add_run_command(arg);
  EXPECT_EQ(JobToText(same, kStartedAt).find("run command:"), std::string::npos) << "said only when it differs";
}

TEST(JobTruthText, TheReasonIsSaidOnce) {
  std::string text = JobToText(AnchoredJob(), kStartedAt);
  EXPECT_TRUE(HasLine(text, "state:      running")) << text;
  v1::Job failed = AnchoredJob();
  failed.set_state(v1::JOB_STATE_FAILED);
  failed.set_state_reason("exited 127: command not found");
  EXPECT_TRUE(HasLine(JobToText(failed, kStartedAt), "state:      failed (exited 127: command not found)"));
}

TEST(JobTruthText, AQueuedJobHasNoPid) {
  v1::Job queued = AnchoredJob();
  queued.set_state(v1::JOB_STATE_QUEUED);
  queued.set_pid(0);
  queued.set_pgid(0);
  queued.set_started_unix_ms(0);
  std::string text = JobToText(queued, kStartedAt);
  EXPECT_TRUE(HasLine(text, "pid:        -")) << text;
  EXPECT_EQ(text.find("pgid 0"), std::string::npos) << text;
}

TEST(JobTruthText, AFailedRunShowsItsLastLinesUnderItsStateEscaped) {
  v1::Job failed = AnchoredJob();
  failed.set_state(v1::JOB_STATE_FAILED);
  failed.set_state_reason("exited 1");
  failed.add_log_tail("Traceback (most recent call last):");
  failed.add_log_tail("ValueError: \x1b]0;owned\x07 bad value");
  std::vector<std::string> lines = TextLines(JobToText(failed, kStartedAt));
  auto state = std::find(lines.begin(), lines.end(), "state:      failed (exited 1)");
  ASSERT_NE(state, lines.end());
  ASSERT_LT(state + 2, lines.end());
  EXPECT_EQ(*(state + 1), "  | Traceback (most recent call last):");
  EXPECT_EQ((state + 2)->find('\x1b'), std::string::npos) << "the job's bytes cannot drive the terminal";
  EXPECT_NE((state + 2)->find("bad value"), std::string::npos);
}

TEST(JobTruthText, EventsCountEveryAttempt) {
  v1::Job job = AnchoredJob();
  job.add_events()->set_kind("traceback");
  v1::JobAttempt* first = job.add_attempts();
  first->set_attempt(1);
  first->set_run_id("r1");
  first->set_state(v1::JOB_STATE_FAILED);
  first->set_events(2);
  job.set_events_total(3);
  const std::string text = JobToText(job, kStartedAt);
  EXPECT_TRUE(HasLine(text, "events:     3 (1 this run)")) << text;
  EXPECT_TRUE(HasLine(text, "  #1 run r1: failed, step -, alloc conf -, 2 events")) << text;
  // The list's EVENTS column counts them too: "-" hid an earlier OOM.
  EXPECT_EQ(JobListRow(job, kStartedAt).back(), "traceback +2 earlier");
  job.clear_events();
  EXPECT_EQ(JobListRow(job, kStartedAt).back(), "+3 earlier");
  job.set_events_total(0);
  EXPECT_EQ(JobListRow(job, kStartedAt).back(), "-");
  job.add_events()->set_kind("traceback");
  job.set_events_total(1);
  EXPECT_TRUE(HasLine(JobToText(job, kStartedAt), "events:     1"));
  EXPECT_EQ(JobListRow(job, kStartedAt).back(), "traceback");
}

TEST(JobTruthJson, RunCommandRunEnvLogTailAndEventsTotal) {
  v1::Job job = AnchoredJob();
  job.add_log_tail("last line");
  job.set_events_total(5);
  job.add_attempts()->set_events(4);
  nlohmann::json j = JobToJson(job, kStartedAt);
  EXPECT_EQ(j["command"], nlohmann::json({"python3", "fake.py", "--max-anchors", "1024"})) << "kept";
  EXPECT_EQ(j["run_command"], nlohmann::json({"python3", "fake.py", "--max-anchors", "768"}));
  EXPECT_EQ(j["run_env"], (nlohmann::json{{"CUDA_VISIBLE_DEVICES", "0"}, {"GPUCTL_RUN_ID", "r2"}}));
  EXPECT_EQ(j["log_tail"], nlohmann::json({"last line"}));
  EXPECT_EQ(j["events_total"], 5);
  EXPECT_EQ(j["attempts"][0]["events"], 4);
  EXPECT_EQ(j["relaunch_pending"], false);
  job.set_relaunch_pending(true);
  job.set_tmux_socket("gpuctl-4f2a9c1e");
  EXPECT_EQ(JobToJson(job, kStartedAt)["relaunch_pending"], true) << "a script can tell it has not ended for good";
  EXPECT_EQ(JobToJson(job, kStartedAt)["tmux_socket"], "gpuctl-4f2a9c1e");
  nlohmann::json bare = JobToJson(v1::Job(), kStartedAt);
  EXPECT_EQ(bare["run_command"], nlohmann::json::array());
  EXPECT_EQ(bare["run_env"], nlohmann::json::object());
  EXPECT_EQ(bare["log_tail"], nlohmann::json::array());
}

TEST(JobReplacedText, AStartOverAnEndedJobSaysSo) {
  v1::Job ended = AnchoredJob();
  ended.set_state(v1::JOB_STATE_FAILED);
  ended.set_state_reason("exited 1");
  ended.set_ended_unix_ms(kStartedAt + 60'000);
  ended.set_log_path("/var/lib/gpuctl/jobs/a768/output.log");
  EXPECT_EQ(JobReplacedText(ended, kStartedAt + 180'000),
            "replacing the ended job a768 (failed 2m00s ago: exited 1; its log stays as "
            "/var/lib/gpuctl/jobs/a768/output.log.prev)\n");
  EXPECT_EQ(JobReplacedText(AnchoredJob(), kStartedAt), "") << "a running job is not replaced";
}

}  // namespace
}  // namespace gpuctl::client
