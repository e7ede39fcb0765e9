// A JobSupervisor over fakes (tmux, processes, commands, clock) and a
// temporary state dir, for the supervisor's and the log follower's tests.
// Jobs are driven from outside as the real ones would be: by appending to
// their log, writing their exit file and ending their process group.
#pragma once

#include <gtest/gtest.h>

#include <chrono>
#include <cstdint>
#include <filesystem>
#include <fstream>
#include <memory>
#include <sstream>
#include <string>
#include <string_view>
#include <functional>
#include <thread>

#include "agents/sys/clock.h"
#include "agents/train/job_store.h"
#include "agents/train/job_supervisor.h"
#include "tests/fakes/fake_clock.h"
#include "tests/fakes/fake_command_runner.h"
#include "tests/fakes/fake_process_control.h"
#include "tests/fakes/fake_tmux.h"
#include "tests/fakes/temp_dir.h"
#include "tests/unit/train/agent_env_fixture.h"

namespace gpuctl::train::test_support {

namespace fs = std::filesystem;
using testing::FakeClock;
using testing::FakeCommandRunner;
using testing::FakeProcessControl;
using testing::FakeTmux;
using testing::TempDir;

inline std::string ReadAll(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

inline void Append(const std::string& path, std::string_view text) {
  std::ofstream out(path, std::ios::binary | std::ios::app);
  out << text;
  ASSERT_TRUE(out.good()) << path;
}

inline void WriteText(const std::string& path, std::string_view text) {
  fs::create_directories(fs::path(path).parent_path());
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out << text;
}

// Polls `done` for up to 5 s of real time (the owner thread acts on its own).
inline bool WaitFor(const std::function<bool()>& done) {
  for (int i = 0; i < 500; ++i) {
    if (done()) return true;
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  return done();
}

class JobSupervisorFixture : public ::testing::Test {
 protected:
  JobSupervisorFixture() : store_(StateDir()) {
    // Every new session gets a fresh pane pid that leads its own live group,
    // as a real tmux pane does.
    tmux_.SetOnNewSession([this](const sys::TmuxSessionSpec& spec) {
      int64_t pid = next_pid_++;
      tmux_.SetPanePid(spec.session, pid);
      procs_.AddProcess(pid, pid, 1000 + static_cast<uint64_t>(pid));
    });
  }
  ~JobSupervisorFixture() override {
    if (supervisor_) supervisor_->Shutdown();
  }

  std::string StateDir() const { return dir_.path() + "/state"; }

  JobSupervisorOptions Options() const {
    JobSupervisorOptions o;
    o.state_dir = StateDir();
    o.lxc_rootfs_template = dir_.path() + "/lxc/{vmid}/rootfs";
    o.monitor_interval = std::chrono::hours(1);  // refreshes come from GetJob
    o.agent_env = testing::AgentEnvWithPrograms(dir_.path());
    return o;
  }

  std::unique_ptr<JobSupervisor> NewSupervisor(const sys::Clock& clock) {
    auto s = std::make_unique<JobSupervisor>(Options(), tmux_, procs_, runner_, clock);
    s->Start();
    return s;
  }
  JobSupervisor& Supervisor() {
    if (!supervisor_) supervisor_ = NewSupervisor(clock_);
    return *supervisor_;
  }

  static JobSpec Spec(const std::string& name) {
    JobSpec spec;
    spec.name = name;
    spec.command = {"python", "train.py"};
    return spec;
  }

  JobRecord StartOk(const JobSpec& spec) {
    Result<JobRecord> r = Supervisor().StartJob(spec);
    EXPECT_TRUE(r.ok()) << r.status().message();
    return r.ok() ? *r : JobRecord{};
  }

  JobRecord Get(const std::string& name) {
    Result<JobRecord> r = Supervisor().GetJob(name);
    EXPECT_TRUE(r.ok()) << r.status().message();
    return r.ok() ? *r : JobRecord{};
  }

  JobRecord OnDisk(const std::string& name) {
    Result<JobRecord> r = store_.Load(name);
    EXPECT_TRUE(r.ok()) << r.status().message();
    return r.ok() ? *r : JobRecord{};
  }

  int64_t NowMs() const {
    return std::chrono::duration_cast<std::chrono::milliseconds>(clock_.WallNow().time_since_epoch()).count();
  }

  // What a job's end looks like from outside: the wrapper wrote its status,
  // its processes are gone, and with them the tmux session.
  void EndJob(const JobRecord& job, const std::string& status) {
    WriteText(job.exit_path, status);
    procs_.KillGroup(job.pgid);
    tmux_.RemoveSession(job.tmux_session);
  }

  void MakeScript(const std::string& path, unsigned mode) {
    WriteText(path, "#!/bin/sh\nexit 0\n");
    ASSERT_EQ(::chmod(path.c_str(), mode), 0);
  }

  TempDir dir_;
  JobStore store_;
  FakeTmux tmux_;
  FakeProcessControl procs_;
  FakeCommandRunner runner_;
  FakeClock clock_;
  // For the tests where time must pass for real. A member declared before
  // supervisor_, so that it outlives the owner thread reading it (a clock
  // local to the test body was destroyed first: ASan's
  // stack-use-after-return in the owner loop, job_owner_loop.cc).
  sys::RealClock real_clock_;
  int64_t next_pid_ = 5001;
  std::unique_ptr<JobSupervisor> supervisor_;
};

}  // namespace gpuctl::train::test_support
