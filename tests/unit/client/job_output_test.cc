#include <gtest/gtest.h>

#include "client/output/job_json.h"
#include "client/output/job_state.h"
#include "client/output/job_text.h"
#include "common/units.h"

namespace gpuctl::client {
namespace {

constexpr int64_t kStarted = 1764530000000;

v1::JobEvent OomEvent() {
  v1::JobEvent e;
  e.set_kind("cuda_oom");
  e.set_offset(12345);
  e.set_message("torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 16.00 GiB.");
  e.set_time_unix_ms(kStarted + 60'000);
  e.set_rank(0);
  e.set_exception_type("torch.OutOfMemoryError");
  e.set_gpu(0);
  e.set_tried_bytes(16 * kGiB);
  e.set_total_bytes(143165636608ull);  // 133.3 GiB
  e.set_free_bytes(12133171200ull);    // 11.3 GiB
  e.set_in_use_bytes(120 * kGiB);
  e.set_allocated_bytes(100 * kGiB);
  e.set_reserved_unallocated_bytes(4 * kGiB);
  e.set_allowed_bytes(130 * kGiB);
  v1::GpuProcessMemory* p = e.add_other_processes();
  p->set_pid(4711);
  p->set_bytes(2 * kGiB);
  e.set_traceback_offset(12000);
  e.set_nccl_code("ncclUnhandledCudaError");
  e.set_signal_number(9);
  e.set_signal_name("SIGKILL");
  e.set_pid(4242);
  return e;
}

// A running job with metrics and one OOM event that carries every field.
v1::Job RunningJob() {
  v1::Job job;
  v1::JobSpec* spec = job.mutable_spec();
  spec->set_name("dflash-768");
  spec->add_command("python3");
  spec->add_command("train.py");
  spec->add_command("--max-anchors");
  spec->add_command("768");
  spec->set_anchors(768);
  spec->set_anchors_flag("--max-anchors");
  spec->set_alloc_conf("expandable_segments:True");
  spec->set_gpus("0");
  spec->set_cwd("/srv/train");
  job.set_state(v1::JOB_STATE_RUNNING);
  job.set_pid(4242);
  job.set_pgid(4242);
  job.set_tmux_session("gpuctl-dflash-768");
  job.set_created_unix_ms(kStarted - 500);
  job.set_started_unix_ms(kStarted);
  job.set_restart_count(1);
  job.set_log_bytes(2048);
  job.set_log_path("/var/lib/gpuctl/jobs/dflash-768/output.log");
  v1::JobMetrics* m = job.mutable_metrics();
  m->set_step(1200);
  m->set_loss(0.4321);
  m->mutable_throughput()->set_value(5123.4);
  m->mutable_throughput()->set_unit("tok/s");
  m->mutable_best_throughput()->set_value(5301.0);
  m->mutable_best_throughput()->set_unit("tok/s");
  *job.add_events() = OomEvent();
  return job;
}

// A job that failed before it reported anything: most optionals unset.
v1::Job BareFailedJob() {
  v1::Job job;
  job.mutable_spec()->set_name("tiny");
  job.mutable_spec()->add_command("/bin/false");
  job.set_state(v1::JOB_STATE_FAILED);
  job.set_exit_code(1);
  job.set_started_unix_ms(kStarted);
  job.set_ended_unix_ms(kStarted + 3'500);
  return job;
}

TEST(JobJson, ContractNamesOfARunningJob) {
  nlohmann::json j = JobToJson(RunningJob(), kStarted + 65'250);
  EXPECT_EQ(j["name"], "dflash-768");
  EXPECT_EQ(j["state"], "running");
  EXPECT_EQ(j["state_reason"], "");
  EXPECT_TRUE(j["exit_code"].is_null());
  EXPECT_TRUE(j["term_signal"].is_null());
  EXPECT_EQ(j["pid"], 4242);
  EXPECT_EQ(j["pgid"], 4242);
  EXPECT_EQ(j["tmux_session"], "gpuctl-dflash-768");
  EXPECT_EQ(j["anchors"], 768);
  EXPECT_EQ(j["alloc_conf"], "expandable_segments:True");
  EXPECT_EQ(j["gpus"], "0");
  EXPECT_EQ(j["container"], "");
  EXPECT_EQ(j["command"], nlohmann::json({"python3", "train.py", "--max-anchors", "768"}));
  EXPECT_EQ(j["created_unix_ms"], kStarted - 500);
  EXPECT_EQ(j["started_unix_ms"], kStarted);
  EXPECT_TRUE(j["ended_unix_ms"].is_null());
  EXPECT_DOUBLE_EQ(j["runtime_seconds"].get<double>(), 65.25);
  EXPECT_EQ(j["restart_count"], 1);
  EXPECT_EQ(j["log_bytes"], 2048);
  EXPECT_EQ(j["log_path"], "/var/lib/gpuctl/jobs/dflash-768/output.log");
  EXPECT_EQ(j["metrics"]["step"], 1200);
  EXPECT_DOUBLE_EQ(j["metrics"]["loss"].get<double>(), 0.4321);
  EXPECT_DOUBLE_EQ(j["metrics"]["throughput"]["value"].get<double>(), 5123.4);
  EXPECT_EQ(j["metrics"]["throughput"]["unit"], "tok/s");
  EXPECT_DOUBLE_EQ(j["metrics"]["best_throughput"]["value"].get<double>(), 5301.0);
  ASSERT_EQ(j["events"].size(), 1u);
}

TEST(JobJson, EventCarriesEveryFieldItHas) {
  nlohmann::json e = JobEventToJson(OomEvent());
  EXPECT_EQ(e["kind"], "cuda_oom");
  EXPECT_EQ(e["offset"], 12345);
  EXPECT_EQ(e["message"], OomEvent().message());
  EXPECT_EQ(e["time_unix_ms"], kStarted + 60'000);
  EXPECT_EQ(e["rank"], 0);  // set to 0 is still set
  EXPECT_EQ(e["exception_type"], "torch.OutOfMemoryError");
  EXPECT_EQ(e["gpu"], 0);
  EXPECT_EQ(e["tried_bytes"], 16 * kGiB);
  EXPECT_EQ(e["total_bytes"], 143165636608ull);
  EXPECT_EQ(e["free_bytes"], 12133171200ull);
  EXPECT_EQ(e["in_use_bytes"], 120 * kGiB);
  EXPECT_EQ(e["allocated_bytes"], 100 * kGiB);
  EXPECT_EQ(e["reserved_unallocated_bytes"], 4 * kGiB);
  EXPECT_EQ(e["allowed_bytes"], 130 * kGiB);
  ASSERT_EQ(e["other_processes"].size(), 1u);
  EXPECT_EQ(e["other_processes"][0]["pid"], 4711);
  EXPECT_EQ(e["other_processes"][0]["bytes"], 2 * kGiB);
  EXPECT_EQ(e["traceback_offset"], 12000);
  EXPECT_EQ(e["nccl_code"], "ncclUnhandledCudaError");
  EXPECT_EQ(e["signal_number"], 9);
  EXPECT_EQ(e["signal_name"], "SIGKILL");
  EXPECT_EQ(e["pid"], 4242);
  EXPECT_EQ(e.size(), 4u + 16u) << e.dump();  // the four always there, and all 16 optionals
}

TEST(JobJson, UnsetEventFieldsAreLeftOut) {
  v1::JobEvent e;
  e.set_kind("traceback");
  e.set_offset(7);
  e.set_message("Traceback (most recent call last):");
  nlohmann::json j = JobEventToJson(e);
  EXPECT_EQ(j.size(), 4u) << j.dump();
  EXPECT_FALSE(j.contains("rank"));
  EXPECT_FALSE(j.contains("gpu"));
  EXPECT_FALSE(j.contains("other_processes"));
}

TEST(JobJson, NullsWhereUnset) {
  nlohmann::json j = JobToJson(BareFailedJob(), kStarted + 999'999);
  EXPECT_EQ(j["state"], "failed");
  EXPECT_EQ(j["exit_code"], 1);
  EXPECT_TRUE(j["term_signal"].is_null());
  EXPECT_TRUE(j["anchors"].is_null());
  EXPECT_EQ(j["ended_unix_ms"], kStarted + 3'500);
  EXPECT_DOUBLE_EQ(j["runtime_seconds"].get<double>(), 3.5);  // ended: now does not count
  EXPECT_TRUE(j["metrics"]["step"].is_null());
  EXPECT_TRUE(j["metrics"]["loss"].is_null());
  EXPECT_TRUE(j["metrics"]["throughput"].is_null());
  EXPECT_TRUE(j["metrics"]["best_throughput"].is_null());
  EXPECT_TRUE(j["events"].is_array());
  EXPECT_TRUE(j["events"].empty());
}

TEST(JobJson, EveryStateHasItsName) {
  EXPECT_STREQ(JobStateName(v1::JOB_STATE_STARTING), "starting");
  EXPECT_STREQ(JobStateName(v1::JOB_STATE_RUNNING), "running");
  EXPECT_STREQ(JobStateName(v1::JOB_STATE_SUCCEEDED), "succeeded");
  EXPECT_STREQ(JobStateName(v1::JOB_STATE_FAILED), "failed");
  EXPECT_STREQ(JobStateName(v1::JOB_STATE_STOPPED), "stopped");
  EXPECT_STREQ(JobStateName(v1::JOB_STATE_LOST), "lost");
  EXPECT_STREQ(JobStateName(v1::JOB_STATE_KILLED_BY_GUARD), "killed_by_guard");
}

TEST(JobJson, ListWrapsJobs) {
  v1::ListJobsResponse list;
  *list.add_jobs() = RunningJob();
  *list.add_jobs() = BareFailedJob();
  nlohmann::json j = JobListToJson(list, kStarted);
  ASSERT_EQ(j["jobs"].size(), 2u);
  EXPECT_EQ(j["jobs"][1]["name"], "tiny");
  EXPECT_EQ(JobListToJson(v1::ListJobsResponse(), kStarted).dump(), R"({"jobs":[]})");
}

TEST(JobText, OomEventLineHasTheKeyNumbers) {
  v1::JobEvent e;
  e.set_kind("cuda_oom");
  e.set_offset(12345);
  e.set_message("CUDA out of memory");
  e.set_gpu(0);
  e.set_tried_bytes(16 * kGiB);
  e.set_free_bytes(12133171200ull);
  e.set_total_bytes(150114295808ull);
  EXPECT_EQ(JobEventToText(e), "cuda_oom at offset 12345: gpu 0, tried 16.0 GiB, free 11.3 GiB of 139.8 GiB");
}

TEST(JobText, OtherEventsKeepTheirMessage) {
  v1::JobEvent e;
  e.set_kind("signal");
  e.set_offset(99);
  e.set_message("Fatal Python error: Segmentation fault\nmore");
  e.set_signal_number(11);
  EXPECT_EQ(JobEventToText(e), "signal at offset 99: signal 11 SIGSEGV: Fatal Python error: Segmentation fault");
  v1::JobEvent t;
  t.set_kind("traceback");
  t.set_offset(5);
  t.set_message("Traceback (most recent call last):");
  t.set_exception_type("ValueError");
  EXPECT_EQ(JobEventToText(t), "traceback at offset 5: ValueError: Traceback (most recent call last):");
}

TEST(JobText, DetailLines) {
  v1::Job job = RunningJob();
  job.clear_events();
  v1::JobEvent* e = job.add_events();
  e->set_kind("cuda_oom");
  e->set_offset(12345);
  e->set_gpu(0);
  e->set_tried_bytes(16 * kGiB);
  e->set_free_bytes(12133171200ull);
  e->set_total_bytes(150114295808ull);
  EXPECT_EQ(JobToText(job, kStarted + 3'725'000),
            "job:        dflash-768\n"
            "kind:       train\n"
            "state:      running\n"
            "exit:       -\n"
            "pid:        4242 (pgid 4242, tmux session gpuctl-dflash-768)\n"
            "runtime:    1h02m (still running)\n"
            "command:    python3 train.py --max-anchors 768\n"
            "cwd:        /srv/train\n"
            "anchors:    768\n"
            "alloc conf: expandable_segments:True\n"
            "gpus:       0\n"
            "container:  -\n"
            "step:       1200\n"
            "loss:       0.4321\n"
            "throughput: 5123 tok/s (best 5301 tok/s)\n"
            "restarts:   1\n"
            "log:        2.0 KiB in /var/lib/gpuctl/jobs/dflash-768/output.log\n"
            "events:     1\n"
            "  cuda_oom at offset 12345: gpu 0, tried 16.0 GiB, free 11.3 GiB of 139.8 GiB\n");
}

TEST(JobText, DetailOfAnEndedJob) {
  v1::Job job = BareFailedJob();
  job.set_state_reason("exited with code 1");
  job.mutable_spec()->add_command("it's here");
  std::string text = JobToText(job, kStarted + 999'999);
  EXPECT_NE(text.find("state:      failed (exited with code 1)\n"), std::string::npos) << text;
  EXPECT_NE(text.find("exit:       code 1\n"), std::string::npos) << text;
  EXPECT_NE(text.find("runtime:    3s\n"), std::string::npos) << text;
  EXPECT_NE(text.find("command:    /bin/false 'it'\\''s here'\n"), std::string::npos) << text;
  EXPECT_NE(text.find("anchors:    -\n"), std::string::npos) << text;
  EXPECT_NE(text.find("throughput: -\n"), std::string::npos) << text;
  EXPECT_NE(text.find("events:     0\n"), std::string::npos) << text;
  job.set_term_signal(15);
  text = JobToText(job, kStarted);
  EXPECT_NE(text.find("exit:       killed by SIGTERM (15)\n"), std::string::npos) << text;
}

TEST(JobText, ListTable) {
  v1::ListJobsResponse list;
  *list.add_jobs() = RunningJob();
  *list.add_jobs() = BareFailedJob();
  EXPECT_EQ(JobListToText(list, kStarted + 3'725'000),
            "NAME        KIND   STATE            PID   RUNTIME  STEP  LOSS    THROUGHPUT  EVENTS\n"
            "dflash-768  train  running          4242  1h02m    1200  0.4321  5123 tok/s  cuda_oom\n"
            "tiny        train  failed (exit 1)  -     3s       -     -       -           -\n");
  EXPECT_EQ(JobListToText(v1::ListJobsResponse(), kStarted), "no jobs\n");
}

TEST(JobText, StartedAndStoppedLines) {
  v1::Job job = RunningJob();
  EXPECT_EQ(JobStartedText(job, ""),
            "started job dflash-768 (pid 4242, tmux session gpuctl-dflash-768)\n"
            "follow its log: gpuctl train logs -f dflash-768\n"
            "see its state:  gpuctl train status dflash-768\n"
            "stop it:        gpuctl train stop dflash-768\n"
            "attach to it:   gpuctl train attach dflash-768\n");
  EXPECT_NE(JobStartedText(job, "--agent 10.0.0.2:50051 ").find("gpuctl --agent 10.0.0.2:50051 train logs -f"),
            std::string::npos);
  job.set_state(v1::JOB_STATE_STOPPED);
  job.set_term_signal(15);
  job.set_ended_unix_ms(kStarted + 125'000);
  job.set_state_reason("stopped by gpuctl train stop");
  EXPECT_EQ(JobStoppedText(job, kStarted + 999'999),
            "job dflash-768: stopped (SIGTERM) after 2m05s (stopped by gpuctl train stop)\n");
}

TEST(JobText, ABuildShowsItsKindAndTheGovernorsFigures) {
  v1::Job job = RunningJob();
  job.mutable_spec()->set_name("fa");
  job.mutable_spec()->set_kind("build");
  v1::BuildStatus& build = *job.mutable_build();
  build.set_budget_bytes(uint64_t{64} << 30);
  build.set_in_use_bytes(uint64_t{40} << 30);
  build.set_peak_bytes(uint64_t{60} << 30);
  build.set_running(9);
  build.set_paused(3);
  build.set_compiles_done(20);
  build.set_pauses(7);
  build.set_paused_seconds(123.9);
  std::string text = JobToText(job, kStarted + 1000);
  EXPECT_NE(text.find("kind:       build\n"), std::string::npos) << text;
  EXPECT_NE(text.find("build:      budget 64.0 GiB, in use 40.0 GiB, peak 60.0 GiB; compiles: 9 running, 3 paused, "
                      "20 done; 7 pauses, 123 compile-s paused; 0 OOM kills\n"),
            std::string::npos)
      << text;
  v1::ListJobsResponse list;
  *list.add_jobs() = job;
  EXPECT_NE(JobListToText(list, kStarted).find("fa    build  running"), std::string::npos) << JobListToText(list, kStarted);
}

}  // namespace
}  // namespace gpuctl::client

namespace gpuctl::client {
namespace {

// A throughput the job printed negative is shown as printed, in the same
// form as a positive one (not "-1.38e+04").
TEST(JobText, ANegativeThroughputKeepsItsSignAndForm) {
  v1::Throughput t;
  t.set_unit("tok/s");
  t.set_value(-13800);
  EXPECT_EQ(FormatThroughput(t), "-13800 tok/s");
  t.set_value(-2.5);
  EXPECT_EQ(FormatThroughput(t), "-2.50 tok/s");
}

}  // namespace
}  // namespace gpuctl::client
