// Fault injection on the job path, with the real gpuctld, gpuctl and tmux:
// kill -9 of the agent at random moments of `train start`, unreadable
// records, `train rm`, and bytes in a log that used to crash the agent.
#include <signal.h>
#include <sys/wait.h>

#include <unistd.h>

#include <filesystem>
#include <random>
#include <set>

#include "tests/integration/train_fixture.h"
#include "tests/fakes/skip_policy.h"

namespace gpuctl::testing {
namespace {

using json = nlohmann::json;

class JobFaults : public TrainFixture {
 protected:
  std::set<std::string> TmuxSessions() const {
    RunResult r = RunProgram({"tmux", "-L", tmux_socket_, "list-sessions", "-F", "#{session_name}"});
    std::set<std::string> sessions;
    std::istringstream lines(r.out);
    for (std::string line; std::getline(lines, line);) {
      if (!line.empty()) sessions.insert(line);
    }
    return sessions;
  }
  void RestartAgent() {
    agent_->Signal(SIGKILL);
    agent_->WaitForExit(std::chrono::seconds(5));
    StartTrainAgent();
  }
};

// After each kill -9 and restart: every tmux session of a job is a visible
// job that may run (none invisible), no job claims to run without its
// session, and every start the client called "started" is such a job.
TEST_F(JobFaults, KillNineDuringStartLeavesNoInvisibleOrMislabelledJob) {
  StartTrainAgent();
  std::mt19937 random(20261201);
  int started_said = 0;
  for (int attempt = 0; attempt < 50; ++attempt) {
    std::string name = "k" + std::to_string(attempt);
    std::vector<std::string> argv = {BinaryPath("gpuctl"), "--agent", address_, "train", "start",
                                     "--name",             name,       "--",    "sleep", "300"};
    BackgroundProcess client(argv, dir_.path() + "/client-" + name + ".log");
    std::this_thread::sleep_for(std::chrono::microseconds(random() % 60'000));
    RestartAgent();
    int client_exit = client.WaitForExit(std::chrono::seconds(20));
    bool said_started = client_exit == 0;
    started_said += said_started;

    RunResult list = Gpuctl({"-o", "json", "train", "list"});
    ASSERT_EQ(list.exit_code, 0) << list.err;
    std::map<std::string, std::string> states;
    json listed = json::parse(list.out);
    for (const json& job : listed["jobs"]) {
      states[job["name"].get<std::string>()] = job["state"].get<std::string>();
    }
    for (const std::string& session : TmuxSessions()) {
      std::string job = session.substr(std::string("gpuctl-").size());
      ASSERT_TRUE(states.contains(job)) << "attempt " << attempt << ": session [" << session << "] job [" << job
                                        << "] has no job among " << states.size() << "\n"
                                        << list.out << "\n" << AgentLog();
      EXPECT_TRUE(states[job] == "running" || states[job] == "orphaned" || states[job] == "starting")
          << "attempt " << attempt << ": " << job << " is " << states[job] << " but its session runs";
    }
    if (said_started) {
      EXPECT_EQ(states[name], "running") << "attempt " << attempt << ": the client said started";
    }
    for (const auto& [job, state] : states) {
      if (state == "running") {
        EXPECT_TRUE(TmuxSessions().contains("gpuctl-" + job)) << job << " is running without its session";
      }
    }
  }
  RecordProperty("starts_said_started", started_said);
  for (int attempt = 0; attempt < 50; ++attempt) Gpuctl({"train", "stop", "k" + std::to_string(attempt), "--grace", "0s"});
}

TEST_F(JobFaults, InvalidUtf8InALogNeitherCrashesTheAgentNorBreaksListing) {
  StartTrainAgent();
  // The OOM line of the issue, with a Latin-1 byte, and a traceback holding one.
  std::string script = dir_.path() + "/bad-bytes.sh";
  dir_.WriteFile("bad-bytes.sh",
                 "#!/bin/sh\n"
                 "printf 'torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB. GPU 0 has a total "
                 "capacity of 79.19 GiB of which 1.2\\351 GiB is free.\\n'\n"
                 "printf 'Traceback (most recent call last):\\n  File \"t\\377.py\", line 1\\nValueError: bad \\300\\n'\n"
                 "exit 1\n");
  ASSERT_EQ(::chmod(script.c_str(), 0755), 0);
  ASSERT_EQ(Gpuctl({"train", "start", "--name", "bytes", "--script", script}).exit_code, 0);
  json job = WaitForEnd("bytes");
  EXPECT_EQ(job["state"], "failed");
  ASSERT_GE(job["events"].size(), 1u) << job.dump();
  // The agent lives on, through a restart too (it used to abort at every start).
  RestartAgent();
  RunResult list = Gpuctl({"-o", "json", "train", "list"});
  ASSERT_EQ(list.exit_code, 0) << list.err;
  EXPECT_NE(list.out.find("\xEF\xBF\xBD"), std::string::npos);
  EXPECT_EQ(Gpuctl({"train", "status", "bytes"}).exit_code, 0);
}

TEST_F(JobFaults, CorruptRecordIsShownUnreadableAndRemovedWithTrainRm) {
  StartTrainAgent();
  ASSERT_EQ(Gpuctl({"train", "start", "--name", "corrupt", "--", "true"}).exit_code, 0);
  WaitForEnd("corrupt");
  dir_.WriteFile("state/jobs/corrupt/job.json", "{ torn");
  RestartAgent();
  json job = Status("corrupt");
  EXPECT_EQ(job["state"], "unreadable") << job.dump();
  RunResult again = Gpuctl({"train", "start", "--name", "corrupt", "--", "true"});
  EXPECT_EQ(again.exit_code, 2) << again.err;
  EXPECT_NE(again.err.find("gpuctl train rm corrupt"), std::string::npos) << again.err;
  RunResult rm = Gpuctl({"train", "rm", "corrupt"});
  EXPECT_EQ(rm.exit_code, 0) << rm.err;
  EXPECT_EQ(Gpuctl({"train", "start", "--name", "corrupt", "--", "true"}).exit_code, 0);
  // A running job cannot be removed.
  ASSERT_EQ(Gpuctl({"train", "start", "--name", "busy", "--", "sleep", "300"}).exit_code, 0);
  RunResult busy = Gpuctl({"train", "rm", "busy"});
  EXPECT_EQ(busy.exit_code, 2) << busy.err;
  EXPECT_NE(busy.err.find("stop it first"), std::string::npos) << busy.err;
  Gpuctl({"train", "stop", "busy", "--grace", "0s"});
}

// A stop whose agent is killed during the grace still ends the job: the
// request and its deadline were saved, and the next agent SIGKILLs on time.
TEST_F(JobFaults, AStopInterruptedByAnAgentRestartStillEnds) {
  StartTrainAgent();
  ASSERT_EQ(Gpuctl({"train", "start", "--name", "deaf", "--", "sh", "-c", "trap '' TERM; sleep 300"}).exit_code, 0);
  std::vector<std::string> argv = {BinaryPath("gpuctl"), "--agent", address_, "train", "stop", "deaf", "--grace", "2s"};
  BackgroundProcess stop(argv, dir_.path() + "/stop.log");
  // Wait until the request is on disk, then kill the agent in the grace.
  auto saved = [&] { return ReadFile(StateDir() + "/jobs/deaf/job.json").find("\"stop_requested\": true") != std::string::npos ||
                            ReadFile(StateDir() + "/jobs/deaf/job.json").find("\"stop_requested\":true") != std::string::npos; };
  for (int i = 0; i < 200 && !saved(); ++i) std::this_thread::sleep_for(std::chrono::milliseconds(10));
  ASSERT_TRUE(saved()) << ReadFile(StateDir() + "/jobs/deaf/job.json");
  RestartAgent();
  stop.WaitForExit(std::chrono::seconds(10));
  json job = WaitForEnd("deaf", std::chrono::seconds(20));
  EXPECT_EQ(job["state"], "stopped") << job.dump();
  EXPECT_FALSE(TmuxSessions().contains("gpuctl-deaf"));
}

// The state directory on a 2 MiB tmpfs that a job's own log fills up: a
// start either records its job or starts nothing, the agent keeps
// answering, and nothing is invisible after a restart.
TEST_F(JobFaults, AFullStateDirectoryNeverHidesAJobNorStopsTheAgent) {
  if (::geteuid() != 0) GPUCTL_SKIP() << "mounting a tmpfs needs root";
  std::filesystem::create_directories(StateDir());
  if (RunProgram({"mount", "-t", "tmpfs", "-o", "size=2m,mode=0700", "tmpfs", StateDir()}).exit_code != 0) {
    GPUCTL_SKIP() << "cannot mount a tmpfs here";
  }
  struct Unmount {
    std::string dir;
    ~Unmount() { RunProgram({"umount", "-l", dir}); }
  } unmount{StateDir()};
  StartTrainAgent();
  // 4 MB of log into 2 MiB: the job's own writes hit ENOSPC.
  ASSERT_EQ(Gpuctl({"train", "start", "--name", "filler", "--", "sh", "-c", "head -c 4000000 /dev/zero | tr '\\0' x; exit 0"})
                .exit_code,
            0);
  WaitForEnd("filler");
  int said_started = 0, refused = 0;
  for (int i = 0; i < 5; ++i) {
    RunResult r = Gpuctl({"train", "start", "--name", "full" + std::to_string(i), "--", "sleep", "300"});
    if (r.exit_code == 0) {
      ++said_started;
    } else {
      ++refused;
      EXPECT_FALSE(TmuxSessions().contains("gpuctl-full" + std::to_string(i))) << "refused, yet it runs: " << r.err;
    }
  }
  EXPECT_GT(refused, 0) << "the state directory never filled";
  RunResult health = Gpuctl({"health"});
  EXPECT_NE(health.exit_code, 3) << "the agent stopped answering: " << health.err;
  RestartAgent();
  RunResult list = Gpuctl({"-o", "json", "train", "list"});
  ASSERT_EQ(list.exit_code, 0) << list.err;
  std::set<std::string> listed;
  // Named: a range-for over json::parse(...)["jobs"] reads the temporary
  // after it is destroyed (ASan: heap-use-after-free).
  json listed_json = json::parse(list.out);
  for (const json& job : listed_json["jobs"]) listed.insert(job["name"].get<std::string>());
  for (const std::string& session : TmuxSessions()) {
    EXPECT_TRUE(listed.contains(session.substr(std::string("gpuctl-").size()))) << session << " runs unseen";
  }
  // Space comes back with train rm, and starts work again. (The filler's
  // "running" may not have reached the full disk: recorded as starting, it is
  // settled only after the launch grace, so wait for its end again.)
  WaitForEnd("filler");
  RunResult rm = Gpuctl({"train", "rm", "filler"});
  ASSERT_EQ(rm.exit_code, 0) << rm.err << Status("filler").dump(2);
  EXPECT_EQ(Gpuctl({"train", "start", "--name", "after", "--", "true"}).exit_code, 0);
  for (int i = 0; i < 5; ++i) Gpuctl({"train", "stop", "full" + std::to_string(i), "--grace", "0s"});
  RecordProperty("starts_said_started_on_a_full_disk", said_started);
}

}  // namespace
}  // namespace gpuctl::testing
