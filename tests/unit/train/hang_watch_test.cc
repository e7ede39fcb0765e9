// Hang detection on its own, over the job table with a fake clock, made-up
// processes and a dumper that records: each kind of progress holds a hang
// off, no progress past the budget is a hang (once), its event carries what
// was seen, and the policies act.
#include "agents/train/hang_watch.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <thread>

#include "common/event_kinds.h"
#include "tests/unit/train/job_parts_fixture.h"

namespace gpuctl::train {
namespace {

using ::testing::HasSubstr;
using std::chrono::milliseconds;
using std::chrono::seconds;

class FakeSampler final : public RunSampler {
 public:
  std::vector<RunProcess> Sample(const JobRecord& /*record*/, bool details) override {
    std::vector<RunProcess> out = processes;
    if (!details) {
      for (RunProcess& p : out) p.argv.clear();
    }
    return out;
  }
  std::vector<RunProcess> processes;
};

class RecordingDumper final : public StackDumper {
 public:
  StackDump Dump(const JobRecord& record, const std::vector<RunProcess>& processes, const std::string& dir) override {
    ++dumps;
    last_run = record.run_id;
    StackDump dump;
    dump.dir = dir;
    for (const RunProcess& p : processes) {
      ProcessDump one;
      one.pid = p.pid;
      one.rank = p.rank;
      one.state = p.state;
      one.method = "py-spy";
      one.top_frame = frames.count(p.pid) ? frames[p.pid] : "wait (threading.py:320)";
      dump.processes.push_back(one);
    }
    return dump;
  }
  int dumps = 0;
  std::string last_run;
  std::map<int64_t, std::string> frames;
};

class FakeStopper final : public JobStopper {
 public:
  Result<JobRecord> BeginAgentStop(const std::string& name, std::chrono::milliseconds grace, AgentStop cause) override {
    calls.push_back({name, grace, cause});
    return JobRecord{};
  }
  struct Call {
    std::string name;
    std::chrono::milliseconds grace;
    AgentStop cause;
  };
  std::vector<Call> calls;
};

class HangWatchTest : public test_support::JobPartsFixture {
 protected:
  HangWatchTest() : watch_(sampler_, dumper_, stopper_, nullptr, Options()) {
    sampler_.processes = {{.pid = 7001, .comm = "python3", .state = 'S', .cpu_ticks = 100, .argv = {"python3"}, .rank = 0},
                          {.pid = 7002, .comm = "python3", .state = 'S', .cpu_ticks = 100, .argv = {"python3"}, .rank = 1}};
  }

  static HangWatchOptions Options() {
    HangWatchOptions o;
    o.sample_interval = seconds(1);
    o.checkpoint_interval = seconds(1);
    o.ticks_per_second = 100;
    return o;
  }

  static JobSpec Watched(const std::string& name, OnHang policy = OnHang::kDump) {
    JobSpec spec = Spec(name);
    spec.hang.policy = policy;
    spec.hang.after_ms = 10'000;
    spec.hang.start_timeout_ms = 20'000;
    return spec;
  }

  // Plays the loop for `span`, a tick each second, with `each` before each.
  void RunFor(seconds span, const std::function<void()>& each = [] {}) {
    for (seconds t{0}; t < span; t += seconds(1)) {
      clock_.Advance(seconds(1));
      each();
      watch_.Tick(table_, Now());
      WaitForDumps();
    }
  }

  // A hang's dump runs on its own thread: let it finish, and tick so it is
  // published.
  void WaitForDumps() {
    for (int i = 0; i < 1000 && watch_.Dumping(); ++i) {
      std::this_thread::sleep_for(milliseconds(2));
      watch_.Tick(table_, Now());
    }
    ASSERT_FALSE(watch_.Dumping());
  }

  std::vector<test_support::PublishedEvent> HungEvents() const {
    std::vector<test_support::PublishedEvent> hung;
    for (const auto& e : events_) {
      if (e.kind == event_kind::kJobHung) hung.push_back(e);
    }
    return hung;
  }

  void Step(JobEntry& entry) { entry.record.metrics.step = entry.record.metrics.step.value_or(0) + 1; }

  FakeSampler sampler_;
  RecordingDumper dumper_;
  FakeStopper stopper_;
  HangWatch watch_;
};

TEST_F(HangWatchTest, NoProgressPastTheStartBudgetIsAHangReportedOnce) {
  PutRunning(Watched("stuck"), 7000);
  RunFor(seconds(19));
  EXPECT_TRUE(HungEvents().empty());
  RunFor(seconds(3));
  const std::vector<test_support::PublishedEvent> hung = HungEvents();
  ASSERT_EQ(hung.size(), 1u);
  const nlohmann::json& f = hung[0].fields;
  EXPECT_EQ(f["budget_source"], "--start-timeout");
  EXPECT_TRUE(f["last_step"].is_null());
  EXPECT_GE(f["seconds_since_progress"].get<double>(), 20.0);
  EXPECT_EQ(f["cpu_still_pids"], nlohmann::json({7001, 7002}));
  EXPECT_EQ(f["processes"].size(), 2u);
  EXPECT_THAT(f["dump_dir"].get<std::string>(), HasSubstr("/jobs/stuck/dumps/run-stuck-"));
  EXPECT_EQ(dumper_.dumps, 1);
  // Still hung: not again.
  RunFor(seconds(30));
  EXPECT_EQ(HungEvents().size(), 1u);
  EXPECT_TRUE(stopper_.calls.empty());  // dump keeps the run
  EXPECT_GT(table_.Find("stuck")->record.progress.hung_since_unix_ms, 0);
}

TEST_F(HangWatchTest, StepsLogLinesCheckpointsAndCpuTimeEachCountAsProgress) {
  JobEntry& entry = PutRunning(Watched("busy"), 7000);
  RunFor(seconds(5), [&] { Step(entry); });
  // Steps every second, then 30 s of each other kind of progress in turn:
  // none is a hang, though each is three times the 10 s budget.
  std::filesystem::create_directories(dir_.path() + "/ckpt");
  entry.record.spec.checkpoint.dir = dir_.path() + "/ckpt";
  int written = 0;
  RunFor(seconds(30), [&] {
    std::ofstream(dir_.path() + "/ckpt/shard" + std::to_string(written++ / 3), std::ios::app) << "bytes";
  });
  RunFor(seconds(30), [&] {
    for (RunProcess& p : sampler_.processes) p.cpu_ticks += 50;  // half a core each
  });
  EXPECT_TRUE(HungEvents().empty());
  EXPECT_EQ(entry.record.progress.budget_source, "--hang-after");
  // Then nothing: a hang, after the 10 s budget, naming the last progress.
  RunFor(seconds(12));
  ASSERT_EQ(HungEvents().size(), 1u);
  EXPECT_EQ(HungEvents()[0].fields["last_progress"], "CPU time");
  EXPECT_EQ(HungEvents()[0].fields["last_step"], 5);
}

TEST_F(HangWatchTest, AStoppedRankIsTheLaggingOne) {
  PutRunning(Watched("ddp"), 7000);
  sampler_.processes[1].state = 'T';
  RunFor(seconds(22));
  ASSERT_EQ(HungEvents().size(), 1u);
  EXPECT_EQ(HungEvents()[0].fields["lagging_rank"], 1);
}

TEST_F(HangWatchTest, WithThreeRanksTheOneWaitingElsewhereIsLagging) {
  PutRunning(Watched("ddp3"), 7000);
  sampler_.processes.push_back({.pid = 7003, .comm = "python3", .state = 'S', .cpu_ticks = 1, .argv = {}, .rank = 2});
  dumper_.frames = {{7001, "all_reduce (distributed_c10d.py:2501)"},
                    {7002, "all_reduce (distributed_c10d.py:2501)"},
                    {7003, "barrier (distributed_c10d.py:4100)"}};
  RunFor(seconds(22));
  ASSERT_EQ(HungEvents().size(), 1u);
  EXPECT_EQ(HungEvents()[0].fields["lagging_rank"], 2);
}

TEST_F(HangWatchTest, FailAndRecoverStopTheRunSayingWhy) {
  PutRunning(Watched("f", OnHang::kFail), 7000);
  PutRunning(Watched("r", OnHang::kRecover), 7100);
  RunFor(seconds(22));
  ASSERT_EQ(stopper_.calls.size(), 2u);
  for (const FakeStopper::Call& call : stopper_.calls) {
    EXPECT_THAT(call.cause.reason, HasSubstr("hung: no progress for"));
    EXPECT_THAT(call.cause.reason, HasSubstr("stacks in"));
    EXPECT_EQ(call.cause.relaunch, call.name == "r");
  }
}

TEST_F(HangWatchTest, ProgressAfterAHangClearsItAndASecondHangIsReported) {
  JobEntry& entry = PutRunning(Watched("again"), 7000);
  RunFor(seconds(22));
  ASSERT_EQ(HungEvents().size(), 1u);
  RunFor(seconds(3), [&] { Step(entry); });
  EXPECT_EQ(entry.record.progress.hung_since_unix_ms, 0);
  RunFor(seconds(12));
  EXPECT_EQ(HungEvents().size(), 2u);
}

TEST_F(HangWatchTest, RepeatedLogLinesAreNotProgressButNewOnesAre) {
  JobEntry& entry = PutRunning(Watched("log"), 7000);
  std::string log = entry.record.log_path;
  auto append = [&](const std::string& line) {
    std::ofstream(log, std::ios::app) << line << "\n";
    entry.ingest.Ingest(entry.record, 1 << 20, table_.NowMs(), nullptr);
  };
  int bar = 0;
  RunFor(seconds(25), [&] { append("eval: " + std::to_string(bar++) + "/100 [00:01<00:10]"); });
  EXPECT_TRUE(HungEvents().empty());
  RunFor(seconds(25), [&] { append("[W] waiting for rank 1"); });
  EXPECT_EQ(HungEvents().size(), 1u);
}

}  // namespace
}  // namespace gpuctl::train
