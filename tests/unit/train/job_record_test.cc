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

JobRecord FullRecord() {
  JobRecord r;
  r.spec.name = "dflash-768";
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
  r.state = JobState::kFailed;
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
  r.guard_kill_reason = "host memory low: 1.2 GiB available";
  r.cgroup = "/gpuctl/dflash-768";
  r.log_path = "/var/lib/gpuctl/jobs/dflash-768/output.log";
  r.exit_path = "/var/lib/gpuctl/jobs/dflash-768/exit_status";
  r.log_bytes = 12345;
  r.parsed_offset = 12000;
  r.metrics.step = 693;
  r.metrics.loss = 2.104;
  r.metrics.grad_norm = 1.25;
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
  return r;
}

// Through text, as the store does.
Result<JobRecord> RoundTrip(const JobRecord& r) { return JobRecordFromJson(json::parse(ToJson(r).dump(2))); }

void ExpectSameThroughput(const std::optional<Throughput>& a, const std::optional<Throughput>& b) {
  ASSERT_EQ(a.has_value(), b.has_value());
  if (!a) return;
  EXPECT_DOUBLE_EQ(a->value, b->value);
  EXPECT_EQ(a->unit, b->unit);
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

TEST(JobRecordJson, FullRecordRoundTrips) {
  const JobRecord in = FullRecord();
  Result<JobRecord> back = RoundTrip(in);
  ASSERT_TRUE(back.ok()) << back.status().message();
  const JobRecord& out = *back;

  EXPECT_EQ(out.spec.name, in.spec.name);
  EXPECT_EQ(out.spec.command, in.spec.command);
  EXPECT_EQ(out.spec.script, in.spec.script);
  EXPECT_EQ(out.spec.anchors, in.spec.anchors);
  EXPECT_EQ(out.spec.anchors_flag, in.spec.anchors_flag);
  EXPECT_EQ(out.spec.alloc_conf, in.spec.alloc_conf);
  EXPECT_EQ(out.spec.env, in.spec.env);
  EXPECT_EQ(out.spec.cwd, in.spec.cwd);
  EXPECT_EQ(out.spec.gpus, in.spec.gpus);
  EXPECT_EQ(out.spec.container, in.spec.container);
  EXPECT_EQ(out.spec.mem_limit_bytes, 64ull << 30);

  EXPECT_EQ(out.state, JobState::kFailed);
  EXPECT_EQ(out.state_reason, in.state_reason);
  EXPECT_EQ(out.exit_code, 1);
  EXPECT_EQ(out.term_signal, 9);
  EXPECT_EQ(out.pid, 4242);
  EXPECT_EQ(out.pgid, 4240);
  EXPECT_EQ(out.pid_start_time, 987654321u);
  EXPECT_EQ(out.tmux_session, in.tmux_session);
  EXPECT_EQ(out.created_unix_ms, in.created_unix_ms);
  EXPECT_EQ(out.started_unix_ms, in.started_unix_ms);
  EXPECT_EQ(out.ended_unix_ms, in.ended_unix_ms);
  EXPECT_EQ(out.restart_count, 2u);
  EXPECT_TRUE(out.stop_requested);
  EXPECT_EQ(out.guard_kill_reason, in.guard_kill_reason);
  EXPECT_EQ(out.cgroup, in.cgroup);
  EXPECT_EQ(out.log_path, in.log_path);
  EXPECT_EQ(out.exit_path, in.exit_path);
  EXPECT_EQ(out.log_bytes, 12345u);
  EXPECT_EQ(out.parsed_offset, 12000u);

  EXPECT_EQ(out.metrics.step, 693u);
  EXPECT_EQ(out.metrics.loss, 2.104);
  EXPECT_EQ(out.metrics.grad_norm, 1.25);
  ExpectSameThroughput(out.metrics.throughput, in.metrics.throughput);
  ExpectSameThroughput(out.metrics.best_throughput, in.metrics.best_throughput);
  EXPECT_EQ(out.metrics.lines_seen, 700u);

  ASSERT_EQ(out.events.size(), 2u);
  EXPECT_EQ(out.events[0].event, FullOomEvent());  // every field, via LogEvent::operator==
  EXPECT_EQ(out.events[0].time_unix_ms, 1735689650000);
  EXPECT_EQ(out.events[1].event, in.events[1].event);
  EXPECT_EQ(out.events[1].time_unix_ms, 1735689650001);
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

std::string ReadAll(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

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
  EXPECT_EQ(ToJson(*out), ToJson(in));

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
  EXPECT_EQ(ReadAll(store.JobDir("corrupt") + "/job.json"), "not json at all");  // left for a person to look at
}

TEST(JobStore, LoadAllOfNoStateIsEmpty) {
  TempDir dir;
  EXPECT_TRUE(JobStore(dir.path() + "/never-created").LoadAll().empty());
}

}  // namespace
}  // namespace gpuctl::train
