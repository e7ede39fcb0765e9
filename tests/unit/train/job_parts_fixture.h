// The job core's parts one at a time, over a job table on a temporary state
// dir with a fake clock, fake processes, tmux and cgroups, and no owner
// thread: a test plays the loop, calling a part's Tick and NextWake itself.
// Runs are put in the table as a start leaves them; events are captured.
#pragma once

#include <gtest/gtest.h>

#include <chrono>
#include <cstdint>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "agents/train/guard_view.h"
#include "agents/train/job_launcher.h"
#include "agents/train/job_part.h"
#include "agents/train/job_starter.h"
#include "agents/train/job_store.h"
#include "agents/train/job_table.h"
#include "agents/train/run_monitor.h"
#include "agents/train/run_processes.h"
#include "agents/train/unreadable_runs.h"
#include "tests/fakes/fake_clock.h"
#include "tests/fakes/fake_command_runner.h"
#include "tests/fakes/fake_process_control.h"
#include "tests/fakes/fake_tmux.h"
#include "tests/fakes/temp_dir.h"
#include "tests/unit/train/agent_env_fixture.h"

namespace gpuctl::train::test_support {

struct PublishedEvent {
  std::string kind;
  std::string job;
  std::string message;
  nlohmann::json fields;
};

// Records each start it is asked for; a start that succeeds puts the new
// run in the table, running, as the real one does.
class FakeStarter final : public JobStarter {
 public:
  struct Call {
    JobSpec spec;
    Lineage lineage;
    bool admitted = false;
  };
  explicit FakeStarter(JobTable& table) : table_(table) {}

  Result<JobRecord> StartRun(JobSpec spec, Lineage lineage, bool admitted) override {
    calls.push_back({spec, lineage, admitted});
    if (!status.ok()) return status;
    JobRecord record;
    record.spec = std::move(spec);
    record.run_id = "run-" + std::to_string(calls.size() + 100);
    record.state = JobState::kRunning;
    record.attempts = std::move(lineage.attempts);
    record.hold_step = lineage.hold_step;
    return table_.Put(std::move(record)).record;
  }

  std::vector<Call> calls;
  Status status;  // what starts answer; ok: started

 private:
  JobTable& table_;
};

class JobPartsFixture : public ::testing::Test {
 protected:
  using TimePoint = JobPart::TimePoint;

  JobPartsFixture()
      : store_(dir_.path() + "/state"),
        table_(store_, clock_,
               [this](std::string kind, std::string job, std::string message, nlohmann::json fields) {
                 events_.push_back({std::move(kind), std::move(job), std::move(message), std::move(fields)});
               }),
        launcher_(LauncherOptions(dir_.path()), store_, tmux_, procs_, runner_),
        processes_(procs_, nullptr),
        unreadable_(table_, launcher_, processes_, tmux_),
        guard_("/"),
        monitor_(table_, hooks_, processes_, unreadable_, guard_, launcher_, tmux_, std::chrono::hours(1)) {}

  static JobLauncherOptions LauncherOptions(const std::string& dir) {
    JobLauncherOptions o;
    o.agent_env = testing::AgentEnvWithPrograms(dir);
    return o;
  }

  static JobSpec Spec(const std::string& name) {
    JobSpec spec;
    spec.name = name;
    spec.command = {"python", "train.py"};
    return spec;
  }

  // A run as a start leaves it: recorded, its wrapper `pid` leading its own
  // live group, its session in tmux.
  JobEntry& PutRunning(JobSpec spec, int64_t pid) {
    const std::string name = spec.name;
    EXPECT_TRUE(store_.Prepare(name).ok());
    JobRecord r;
    r.spec = std::move(spec);
    r.run_id = "run-" + name;
    r.state = JobState::kRunning;
    r.state_reason = "running";
    r.tmux_session = "gpuctl-" + name;
    r.pid = r.pgid = pid;
    r.pid_start_time = 1000 + static_cast<uint64_t>(pid);
    r.created_unix_ms = r.started_unix_ms = table_.NowMs();
    r.log_path = store_.LogPath(name);
    r.exit_path = store_.ExitPath(name);
    procs_.AddProcess(pid, pid, *r.pid_start_time);
    tmux_.AddSession(r.tmux_session);
    JobEntry& entry = table_.Put(std::move(r));
    EXPECT_TRUE(table_.Save(entry).ok());
    table_.Publish(entry);
    return entry;
  }

  // The same run, ended: its processes gone and its state settled.
  JobEntry& PutEnded(JobSpec spec, int64_t pid, JobState state) {
    JobEntry& entry = PutRunning(std::move(spec), pid);
    procs_.KillGroup(pid);
    entry.record.state = state;
    entry.record.ended_unix_ms = table_.NowMs();
    EXPECT_TRUE(table_.Save(entry).ok());
    table_.Publish(entry);
    return entry;
  }

  TimePoint Now() const { return clock_.SteadyNow(); }

  std::vector<std::string> EventKinds() const {
    std::vector<std::string> kinds;
    for (const PublishedEvent& e : events_) kinds.push_back(e.kind);
    return kinds;
  }

  testing::TempDir dir_;
  JobStore store_;
  testing::FakeClock clock_;
  testing::FakeProcessControl procs_;
  testing::FakeTmux tmux_;
  testing::FakeCommandRunner runner_;
  std::vector<PublishedEvent> events_;
  JobTable table_;
  JobLauncher launcher_;
  RunProcesses processes_;
  UnreadableRuns unreadable_;
  GuardView guard_;
  JobParts hooks_;  // the parts whose refresh hooks the monitor calls
  RunMonitor monitor_;
};

}  // namespace gpuctl::train::test_support
