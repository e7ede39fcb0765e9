#include "agents/train/job_record.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <sys/stat.h>

#include <cmath>
#include <filesystem>
#include <fstream>
#include <limits>
#include <sstream>
#include <string>

#include "agents/train/job_store.h"
#include "tests/fakes/job_fields.h"
#include "tests/fakes/temp_dir.h"

namespace gpuctl::train {
namespace {

using nlohmann::json;
using testing::TempDir;

LogEvent FullOomEvent() {
  LogEvent e;
  e.kind = std::string(kCudaOom);
  e.offset = 458;
  e.message = "torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 16.00 GiB.";
  e.rank = 3;
  e.exception_type = "torch.OutOfMemoryError";
  e.gpu = 1;
  e.tried_bytes = 17179869184u;
  e.total_bytes = 150109106995u;
  e.free_bytes = 12122254213u;
  e.in_use_bytes = 137988054466u;
  e.allocated_bytes = 137438953472u;
  e.reserved_unallocated_bytes = 2097152u;
  e.allowed_bytes = 75161927680u;
  e.other_processes = {{1234, 1073741824u}, {5678, 2147483648u}};
  e.traceback_offset = 190;
  e.nccl_code = "ncclUnhandledCudaError";
  e.signal_number = 9;
  e.signal_name = "SIGKILL";
  e.pid = 4242;
  return e;
}

// Every field of the record, and of what it holds, set to a value no
// default has (FullRecordSetsEveryField checks that, field by field), so that
// a field ToJson or JobRecordFromJson forgets comes back different. Queued,
// and a container job, since the queue's and the container's fields are
// saved only then (see QueueAndContainerFieldsAreSavedOnlyWhenTheyMeanSomething).
JobRecord FullRecord() {
  JobRecord r;
  r.spec.name = "dflash-768";
  r.spec.kind = std::string(kJobKindBuild);  // its build options are saved only then
  r.spec.build.mem_budget_bytes = 48ull << 30;
  r.spec.build.cpus = 12;
  r.spec.build.archs = {"8.0", "9.0"};
  r.spec.command = {"/srv/train.sh", "--lr", "3e-4"};
  r.spec.script = "/srv/train.sh";
  r.spec.anchors = 1024;
  r.spec.anchors_flag = "--budget";
  r.spec.alloc_conf = "expandable_segments:True";
  r.spec.env = {{"WANDB_MODE", "offline"}, {"A", "x y"}};
  r.spec.cwd = "/srv";
  r.spec.gpus = "0,1";
  r.spec.container = "200";
  r.spec.mem_limit_bytes = 64ull << 30;
  r.spec.oom.recover = true;
  r.spec.oom.retries = 5;
  r.spec.oom.knobs = {{"--batch-size", 0.5, 2}, {"--budget", 0.8, 128}};
  r.spec.oom.retry_args = {"--resume", "latest"};
  r.spec.num_gpus = 2;
  r.spec.gpu_mem_bytes = 40ull << 30;
  r.spec.priority = -3;
  r.spec.attempt = 3;
  r.spec.hang.policy = OnHang::kRecover;
  r.spec.hang.after_ms = 1'200'000;
  r.spec.hang.start_timeout_ms = 3'600'000;
  r.spec.checkpoint.dir = "/srv/ckpt";
  r.spec.checkpoint.resume_arg = "--resume_from_checkpoint={checkpoint}";
  r.spec.checkpoint.complete_marker = "DONE";
  r.spec.checkpoint.max_restarts_without_progress = 5;
  r.spec.on_fail = OnFail::kRecover;
  r.spec.on_gpu_fault = OnFail::kRecover;
  r.spec.resume_from = "/srv/ckpt/checkpoint-400";
  r.run_id = "r1735689600-3f2a";
  r.state = JobState::kQueued;
  r.state_reason = "exited 1";
  r.exit_code = 1;
  r.term_signal = 9;
  r.pid = 4242;
  r.pgid = 4240;
  r.pid_start_time = 987654321u;
  r.tmux_session = "gpuctl-dflash-768";
  r.created_unix_ms = 1735689600000;
  r.started_unix_ms = 1735689600100;
  r.ended_unix_ms = 1735689700000;
  r.restart_count = 2;
  r.stop_requested = true;
  r.stop_deadline_unix_ms = 1735689630000;
  r.guard_kill_reason = "host memory low: 1.2 GiB available";
  r.cgroup = "/gpuctl/dflash-768@r1735689600-3f2a";
  r.log_path = "/var/lib/gpuctl/jobs/dflash-768/output.log";
  r.exit_path = "/var/lib/gpuctl/jobs/dflash-768/exit_status";
  r.cgroup_gate = "/var/lib/lxc/200/rootfs/var/lib/gpuctl/jobs/dflash-768/cgroup_gate";
  r.pid_path = "/var/lib/lxc/200/rootfs/var/lib/gpuctl/jobs/dflash-768/job_pid";
  r.inner_pid = 5151;
  r.inner_pgid = 5150;
  r.inner_start_time = 123456789u;
  r.log_bytes = 12345;
  r.parsed_offset = 12000;
  r.metrics.step = 693;
  r.metrics.loss = 2.104;
  r.metrics.grad_norm = 1.25;
  r.metrics.learning_rate = 3e-4;
  r.metrics.throughput = Throughput{13.8, "Ktok/s"};
  r.metrics.best_throughput = Throughput{14.5, "Ktok/s"};
  r.metrics.lines_seen = 700;
  r.events.push_back({FullOomEvent(), 1735689650000});
  LogEvent sig;
  sig.kind = std::string(kSignal);
  sig.offset = 12001;
  sig.message = "Signals.SIGKILL: 9";
  sig.signal_number = 9;
  r.events.push_back({sig, 1735689650001});
  r.events_dropped = 17;
  AttemptRecord a;
  a.attempt = 2;
  a.run_id = "r1735689000-77aa";
  a.alloc_conf = "expandable_segments:True,max_split_size_mb:128";
  a.command = {"/srv/train.sh", "--lr", "3e-4", "--budget", "768"};
  a.state = JobState::kKilledByGuard;
  a.state_reason = "CUDA out of memory";
  a.step = 412;
  a.best_throughput = Throughput{12.1, "Ktok/s"};
  a.log_path = "/var/lib/gpuctl/jobs/dflash-768/output.log.2";
  a.started_unix_ms = 1735689000000;
  a.ended_unix_ms = 1735689500000;
  a.changes = {"--budget 1024 -> 768"};
  a.resumed_from = "/srv/ckpt/checkpoint-200";
  a.events = 4;
  r.attempts.push_back(a);
  r.oom_decided = true;
  r.hold_step = 412;
  r.progress = {1735689640000, "step 693", 120'000, "learned", 1735689645000, "/var/lib/gpuctl/jobs/dflash-768/dumps/x"};
  r.agent_stop_reason = "hung: no progress for 130 s";
  r.agent_stop_cause = "hang";
  r.relaunch_after_stop = true;
  r.restarts_without_progress = 1;
  r.relaunch_decided = true;
  r.gpu_memory.push_back({1, "GPU-5f1c", 30ull << 30, 33ull << 30, 80ull << 30, true});
  r.queued_unix_ms = 1735689599000;
  r.queue_position = 2;
  r.waiting_for = "2 GPUs: GPU 0 held by job a";
  r.run_command = {"/srv/train.sh", "--lr", "3e-4", "--budget", "768"};
  r.run_env = {{"GPUCTL_RUN_ID", "r1735689600-3f2a"}, {"PATH", "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"}};
  r.log_tail = {"Traceback (most recent call last):", "RuntimeError: CUDA out of memory"};
  return r;
}

// Through text, as the store does.
Result<JobRecord> RoundTrip(const JobRecord& r) { return JobRecordFromJson(json::parse(ToJson(r).dump(2))); }

// The record's place in the queue is not saved: the queue recomputes it on
// every pass (gpu_queue.cc), an agent's restart included.
JobRecord AsLoaded(JobRecord r) {
  r.queue_position = 0;
  return r;
}

// Each field of `out` against `expected`, naming the one that differs, down
// into what the record holds; then the whole.
void ExpectSameRecord(const JobRecord& out, const JobRecord& expected) {
  using testing::ExpectSameFields;
  ExpectSameFields(out, expected, "record");
  ExpectSameFields(out.spec, expected.spec, "record.spec");
  ExpectSameFields(out.spec.oom, expected.spec.oom, "record.spec.oom");
  ExpectSameFields(out.spec.build, expected.spec.build, "record.spec.build");
  ExpectSameFields(out.spec.hang, expected.spec.hang, "record.spec.hang");
  ExpectSameFields(out.spec.checkpoint, expected.spec.checkpoint, "record.spec.checkpoint");
  ExpectSameFields(out.progress, expected.progress, "record.progress");
  ExpectSameFields(out.metrics, expected.metrics, "record.metrics");
  ASSERT_EQ(out.events.size(), expected.events.size());
  for (size_t i = 0; i < out.events.size(); ++i) {
    ExpectSameFields(out.events[i].event, expected.events[i].event, "record.events[" + std::to_string(i) + "]");
  }
  ASSERT_EQ(out.attempts.size(), expected.attempts.size());
  for (size_t i = 0; i < out.attempts.size(); ++i) {
    ExpectSameFields(out.attempts[i], expected.attempts[i], "record.attempts[" + std::to_string(i) + "]");
  }
  EXPECT_TRUE(out == expected) << "read back:\n" << ToJson(out).dump(2);
}

TEST(JobState, NamesRoundTrip) {
  for (JobState s : {JobState::kStarting, JobState::kRunning, JobState::kSucceeded, JobState::kFailed,
                     JobState::kStopped, JobState::kLost, JobState::kKilledByGuard}) {
    EXPECT_EQ(ParseJobState(JobStateName(s)), s) << JobStateName(s);
  }
  EXPECT_STREQ(JobStateName(JobState::kKilledByGuard), "killed_by_guard");
  EXPECT_STREQ(JobStateName(JobState::kRunning), "running");
  EXPECT_EQ(ParseJobState("Running"), std::nullopt);
  EXPECT_EQ(ParseJobState(""), std::nullopt);
  EXPECT_TRUE(IsActive(JobState::kStarting));
  EXPECT_TRUE(IsActive(JobState::kRunning));
  EXPECT_FALSE(IsActive(JobState::kStopped));
  EXPECT_FALSE(IsActive(JobState::kLost));
}

TEST(JobRecordJson, FullRecordSetsEveryField) {
  using testing::ExpectEveryFieldSet;
  const JobRecord r = FullRecord();
  ExpectEveryFieldSet(r, "record");
  ExpectEveryFieldSet(r.spec, "record.spec");
  ExpectEveryFieldSet(r.spec.oom, "record.spec.oom");
  ExpectEveryFieldSet(r.spec.oom.knobs.at(0), "record.spec.oom.knobs[0]");
  ExpectEveryFieldSet(r.spec.build, "record.spec.build");
  ExpectEveryFieldSet(r.spec.hang, "record.spec.hang");
  ExpectEveryFieldSet(r.spec.checkpoint, "record.spec.checkpoint");
  ExpectEveryFieldSet(r.progress, "record.progress");
  ExpectEveryFieldSet(r.metrics, "record.metrics");
  ExpectEveryFieldSet(*r.metrics.throughput, "record.metrics.throughput");
  ExpectEveryFieldSet(r.events.at(0), "record.events[0]");
  ExpectEveryFieldSet(r.events.at(0).event, "record.events[0].event");
  ExpectEveryFieldSet(r.events.at(0).event.other_processes.at(0), "record.events[0].event.other_processes[0]");
  ExpectEveryFieldSet(r.attempts.at(0), "record.attempts[0]");
  ExpectEveryFieldSet(r.gpu_memory.at(0), "record.gpu_memory[0]");
}

// Every field of the record comes back, the restart-critical ones among them
// (run_id, attempts, hold_step, waiting_for, stop_deadline_unix_ms,
// inner_pid, the OOM policy): an agent restarted from these records carries
// on the runs, stops and remediations the last one began.
TEST(JobRecordJson, EveryFieldRoundTrips) {
  const JobRecord in = FullRecord();
  Result<JobRecord> back = RoundTrip(in);
  ASSERT_TRUE(back.ok()) << back.status().message();
  ExpectSameRecord(*back, AsLoaded(in));
  // A few by value too, independent of the copy compared against.
  EXPECT_EQ(back->run_id, "r1735689600-3f2a");
  EXPECT_EQ(back->hold_step, 412u);
  EXPECT_EQ(back->stop_deadline_unix_ms, 1735689630000);
  EXPECT_EQ(back->inner_pid, 5151);
  EXPECT_EQ(back->waiting_for, "2 GPUs: GPU 0 held by job a");
  EXPECT_TRUE(back->spec.oom.recover);
  EXPECT_EQ(back->spec.oom.knobs, (std::vector<OomKnob>{{"--batch-size", 0.5, 2}, {"--budget", 0.8, 128}}));
  ASSERT_EQ(back->attempts.size(), 1u);
  EXPECT_EQ(back->attempts[0].run_id, "r1735689000-77aa");
}

// The queue's fields mean something only while the job is queued, and the
// container's only with a pid file: otherwise they are not saved, and read
// back as their defaults.
TEST(JobRecordJson, QueueAndContainerFieldsAreSavedOnlyWhenTheyMeanSomething) {
  for (JobState state : {JobState::kStarting, JobState::kRunning, JobState::kFailed, JobState::kStopped}) {
    SCOPED_TRACE(JobStateName(state));
    JobRecord in = FullRecord();
    in.state = state;
    JobRecord expected = AsLoaded(in);
    expected.queued_unix_ms = 0;
    expected.waiting_for.clear();
    Result<JobRecord> back = RoundTrip(in);
    ASSERT_TRUE(back.ok()) << back.status().message();
    ExpectSameRecord(*back, expected);
  }
  JobRecord host = FullRecord();
  host.spec.container.clear();
  host.pid_path.clear();
  JobRecord expected = AsLoaded(host);
  expected.inner_pid = 0;
  expected.inner_pgid = 0;
  expected.inner_start_time.reset();
  Result<JobRecord> back = RoundTrip(host);
  ASSERT_TRUE(back.ok()) << back.status().message();
  ExpectSameRecord(*back, expected);
}

TEST(JobRecordJson, EventRoundTripsAlone) {
  EXPECT_EQ(LogEventFromJson(json::parse(ToJson(FullOomEvent()).dump())), FullOomEvent());
  LogEvent bare;
  bare.kind = "traceback";
  bare.offset = 7;
  json j = ToJson(bare);
  EXPECT_FALSE(j.contains("rank"));  // absent values are left out, not written as null
  EXPECT_FALSE(j.contains("other_processes"));
  EXPECT_EQ(LogEventFromJson(j), bare);
}

TEST(JobRecordJson, NonFiniteMetricsSurviveAsValues) {
  JobRecord r = FullRecord();
  r.metrics.loss = std::numeric_limits<double>::quiet_NaN();
  r.metrics.grad_norm = std::numeric_limits<double>::infinity();
  std::string text = ToJson(r).dump();
  Result<JobRecord> back = JobRecordFromJson(json::parse(text));
  ASSERT_TRUE(back.ok()) << back.status().message() << "\n" << text;
  ASSERT_TRUE(back->metrics.loss.has_value()) << "a NaN loss must not become 'no loss'";
  EXPECT_TRUE(std::isnan(*back->metrics.loss));
  ASSERT_TRUE(back->metrics.grad_norm.has_value());
  EXPECT_TRUE(std::isinf(*back->metrics.grad_norm));
  EXPECT_GT(*back->metrics.grad_norm, 0);
  r.metrics.loss = -std::numeric_limits<double>::infinity();
  back = RoundTrip(r);
  ASSERT_TRUE(back.ok());
  EXPECT_EQ(back->metrics.loss, -std::numeric_limits<double>::infinity());
}

TEST(JobRecordJson, UnknownStateIsRefused) {
  json j = ToJson(FullRecord());
  j["state"] = "zombie";
  Result<JobRecord> r = JobRecordFromJson(j);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().code(), ErrorCode::kInvalidArgument);
  EXPECT_NE(r.status().message().find("unknown state 'zombie'"), std::string::npos) << r.status().message();
}

TEST(JobRecordJson, MissingRequiredFieldsAreNamed) {
  json no_state = ToJson(FullRecord());
  no_state.erase("state");
  Result<JobRecord> r = JobRecordFromJson(no_state);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().code(), ErrorCode::kInvalidArgument);
  EXPECT_NE(r.status().message().find("state"), std::string::npos) << r.status().message();

  json no_spec = ToJson(FullRecord());
  no_spec.erase("spec");
  r = JobRecordFromJson(no_spec);
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.status().message().find("spec"), std::string::npos) << r.status().message();

  json wrong_type = ToJson(FullRecord());
  wrong_type["pid"] = "many";
  r = JobRecordFromJson(wrong_type);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().code(), ErrorCode::kInvalidArgument);
}

TEST(JobRecordJson, MissingOptionalFieldsTakeTheirDefaults) {
  json j = {{"spec", {{"name", "old-job"}}}, {"state", "running"}};
  Result<JobRecord> r = JobRecordFromJson(j);
  ASSERT_TRUE(r.ok()) << r.status().message();
  EXPECT_EQ(r->spec.name, "old-job");
  EXPECT_TRUE(r->spec.command.empty());
  EXPECT_EQ(r->spec.anchors, std::nullopt);
  EXPECT_EQ(r->spec.anchors_flag, "--max-anchors");
  EXPECT_TRUE(r->spec.env.empty());
  EXPECT_EQ(r->state, JobState::kRunning);
  EXPECT_EQ(r->exit_code, std::nullopt);
  EXPECT_EQ(r->term_signal, std::nullopt);
  EXPECT_EQ(r->pid_start_time, std::nullopt);
  EXPECT_EQ(r->pid, 0);
  EXPECT_EQ(r->restart_count, 0u);
  EXPECT_FALSE(r->stop_requested);
  EXPECT_EQ(r->guard_kill_reason, std::nullopt);
  EXPECT_EQ(r->cgroup, "");
  EXPECT_EQ(r->spec.mem_limit_bytes, std::nullopt);
  EXPECT_EQ(r->parsed_offset, 0u);
  EXPECT_EQ(r->metrics.step, std::nullopt);
  EXPECT_EQ(r->metrics.loss, std::nullopt);
  EXPECT_TRUE(r->events.empty());
  // Records from before what a run really got: none of it, and no error.
  EXPECT_TRUE(r->run_command.empty());
  EXPECT_TRUE(r->run_env.empty());
  EXPECT_TRUE(r->log_tail.empty());

  // Explicit nulls read as absent too.
  j["exit_code"] = nullptr;
  j["metrics"] = {{"step", nullptr}};
  r = JobRecordFromJson(j);
  ASSERT_TRUE(r.ok()) << r.status().message();
  EXPECT_EQ(r->exit_code, std::nullopt);
  EXPECT_EQ(r->metrics.step, std::nullopt);
}

// A record may have been edited or planted: an integer field holding 1e300
// was converted to int64_t, which is undefined behaviour (a job record
// variant of what tests/fuzz/event_journal_fuzz found; kept as
// tests/fuzz/regressions/job_record/pid-1e300). Fractions and values the
// field cannot hold (-1 restarts) are refused as well, naming the value.
TEST(JobRecordJson, IntegerFieldsRefuseOtherNumbers) {
  struct Case {
    std::vector<std::string> path;
    json value;
  };
  for (const Case& c : std::vector<Case>{{{"pid"}, 1e300},
                                          {{"created_unix_ms"}, 1.5},
                                          {{"restart_count"}, -1},
                                          {{"exit_code"}, 4294967296},
                                          {{"pid_start_time"}, -3},
                                          {{"metrics", "step"}, 2.5},
                                          {{"metrics", "lines_seen"}, 1e20},
                                          {{"spec", "mem_limit_bytes"}, 1e30},
                                          {{"events", "0", "offset"}, 1e300},
                                          {{"events", "0", "time_unix_ms"}, 1e300}}) {
    json j = ToJson(FullRecord());
    ASSERT_FALSE(j["events"].empty());
    json* field = &j;
    for (size_t i = 0; i + 1 < c.path.size(); ++i) {
      field = field->is_array() ? &(*field)[std::stoul(c.path[i])] : &(*field)[c.path[i]];
    }
    (*field)[c.path.back()] = c.value;
    Result<JobRecord> r = JobRecordFromJson(j);
    ASSERT_FALSE(r.ok()) << c.path.back() << " = " << c.value.dump();
    EXPECT_EQ(r.status().code(), ErrorCode::kInvalidArgument);
    EXPECT_NE(r.status().message().find("expected an integer"), std::string::npos) << r.status().message();
  }
}

// --- JobStore ---

JobRecord RecordNamed(const std::string& name, int64_t created) {
  JobRecord r;
  r.spec.name = name;
  r.spec.command = {"python", "train.py"};
  r.state = JobState::kRunning;
  r.created_unix_ms = created;
  return r;
}

using gpuctl::testing::ReadText;

TEST(JobStore, PathsLiveUnderStateDirJobsName) {
  JobStore store("/var/lib/gpuctl");
  EXPECT_EQ(store.JobDir("a"), "/var/lib/gpuctl/jobs/a");
  EXPECT_EQ(store.LogPath("a"), "/var/lib/gpuctl/jobs/a/output.log");
  EXPECT_EQ(store.ExitPath("a"), "/var/lib/gpuctl/jobs/a/exit_status");
}

TEST(JobStore, SaveThenLoad) {
  TempDir dir;
  JobStore store(dir.path());
  JobRecord in = FullRecord();
  ASSERT_TRUE(store.Prepare(in.spec.name).ok());
  struct stat st {};
  ASSERT_EQ(::stat(store.JobDir(in.spec.name).c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 0777, 0700u);

  ASSERT_TRUE(store.Save(in).ok());
  ASSERT_EQ(::stat((store.JobDir(in.spec.name) + "/job.json").c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 0777, 0600u);
  Result<JobRecord> out = store.Load(in.spec.name);
  ASSERT_TRUE(out.ok()) << out.status().message();
  ExpectSameRecord(*out, AsLoaded(in));  // the record itself, not ToJson's view of it on both sides
  EXPECT_EQ(out->run_id, "r1735689600-3f2a");
  EXPECT_EQ(out->hold_step, 412u);

  // A second save replaces the first, leaving no temp files behind.
  in.state = JobState::kSucceeded;
  ASSERT_TRUE(store.Save(in).ok());
  EXPECT_EQ(store.Load(in.spec.name)->state, JobState::kSucceeded);
  int files = 0;
  for ([[maybe_unused]] const auto& e : std::filesystem::directory_iterator(store.JobDir(in.spec.name))) ++files;
  EXPECT_EQ(files, 1);
}

TEST(JobStore, LoadOfAMissingJobIsNotFoundWithTheName) {
  TempDir dir;
  JobStore store(dir.path());
  Result<JobRecord> r = store.Load("nope-42");
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().code(), ErrorCode::kNotFound);
  EXPECT_NE(r.status().message().find("'nope-42'"), std::string::npos) << r.status().message();
}

TEST(JobStore, LoadOfACorruptRecordSaysWhere) {
  TempDir dir;
  JobStore store(dir.path());
  dir.WriteFile("jobs/bad/job.json", "{\"spec\": {\"name\": ");
  Result<JobRecord> r = store.Load("bad");
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().code(), ErrorCode::kInvalidArgument);
  EXPECT_NE(r.status().message().find(store.JobDir("bad") + "/job.json"), std::string::npos)
      << r.status().message();
}

TEST(JobStore, LoadAllShowsCorruptRecordsAsUnreadableAndSortsByCreation) {
  TempDir dir;
  JobStore store(dir.path());
  for (const JobRecord& r : {RecordNamed("late", 3000), RecordNamed("early", 1000), RecordNamed("mid", 2000)}) {
    ASSERT_TRUE(store.Prepare(r.spec.name).ok());
    ASSERT_TRUE(store.Save(r).ok());
  }
  dir.WriteFile("jobs/corrupt/job.json", "not json at all");
  dir.WriteFile("jobs/badstate/job.json", R"({"spec": {"name": "badstate"}, "state": "weird"})");
  dir.MakeDir("jobs/empty-dir");
  dir.WriteFile("jobs/stray-file", "x");

  dir.WriteFile("jobs/imposter/job.json", ToJson(RecordNamed("other", 500)).dump());
  dir.WriteFile("jobs/bad name/job.json", "{}");  // not a job name: not even shown

  std::vector<JobRecord> all = store.LoadAll();
  // The readable ones in creation order, after the unreadable ones (time 0).
  ASSERT_EQ(all.size(), 6u);
  std::vector<std::string> unreadable;
  for (size_t i = 0; i < 3; ++i) {
    EXPECT_EQ(all[i].state, JobState::kUnreadable) << all[i].spec.name;
    unreadable.push_back(all[i].spec.name);
  }
  std::sort(unreadable.begin(), unreadable.end());
  EXPECT_EQ(unreadable, (std::vector<std::string>{"badstate", "corrupt", "imposter"}));
  for (size_t i = 0; i < 3; ++i) {
    EXPECT_NE(all[i].state_reason.find("gpuctl train rm " + all[i].spec.name), std::string::npos);
  }
  EXPECT_EQ(all[3].spec.name, "early");
  EXPECT_EQ(all[4].spec.name, "mid");
  EXPECT_EQ(all[5].spec.name, "late");
  // An unreadable record is never overwritten.
  EXPECT_EQ(store.Save(all[0]).code(), ErrorCode::kFailedPrecondition);
  EXPECT_EQ(ReadText(store.JobDir("corrupt") + "/job.json"), "not json at all");  // left for a person to look at
}

TEST(JobStore, LoadAllOfNoStateIsEmpty) {
  TempDir dir;
  EXPECT_TRUE(JobStore(dir.path() + "/never-created").LoadAll().empty());
}

}  // namespace
}  // namespace gpuctl::train
