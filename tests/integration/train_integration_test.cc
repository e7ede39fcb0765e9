// gpuctl train, end to end: the real gpuctld and gpuctl, real tmux, real jobs.
#include <signal.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <fstream>
#include <thread>

#include "tests/fakes/skip_policy.h"
#include "tests/integration/train_fixture.h"

namespace gpuctl::testing {
namespace {

using nlohmann::json;

class Train : public TrainFixture {};

// Alive and not a zombie: an orphan whose reaper does not reap (some
// container inits) still answers kill(pid, 0).
bool ProcessRunning(int64_t pid) {
  if (kill(static_cast<pid_t>(pid), 0) != 0) return false;
  std::ifstream stat("/proc/" + std::to_string(pid) + "/stat");
  std::string line;
  std::getline(stat, line);
  size_t close = line.rfind(')');
  return close != std::string::npos && close + 2 < line.size() && line[close + 2] != 'Z';
}

TEST_F(Train, StartsInTmuxWithEnvAnchorsAndParsesMetrics) {
  StartTrainAgent();
  RunResult r = Gpuctl({"train", "start", "--name", "toy", "--anchors", "768", "--alloc-conf",
                        "expandable_segments:True", "--env", "FOO=bar baz", "--", "python3", ToyTrain(), "--steps",
                        "6", "--interval", "0.02", "--max-anchors", "1024"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  json job = WaitForEnd("toy");
  EXPECT_EQ(job["state"], "succeeded") << job.dump(2);
  EXPECT_EQ(job["exit_code"], 0);
  EXPECT_EQ(job["anchors"], 768);
  EXPECT_EQ(job["alloc_conf"], "expandable_segments:True");
  EXPECT_GT(job["pid"].get<int64_t>(), 0);
  EXPECT_EQ(job["metrics"]["step"], 5);
  EXPECT_TRUE(job["metrics"]["loss"].is_number());
  EXPECT_EQ(job["metrics"]["throughput"]["unit"], "tok/s");
  EXPECT_GT(job["metrics"]["throughput"]["value"].get<double>(), 10000);
  std::string log = ReadFile(StateDir() + "/jobs/toy/output.log");
  EXPECT_EQ(job["log_bytes"].get<uint64_t>(), log.size());
  // --anchors replaced the command's own --max-anchors instead of adding one.
  EXPECT_NE(log.find("max_anchors=768"), std::string::npos) << log;
  EXPECT_NE(log.find("PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True"), std::string::npos) << log;
  EXPECT_NE(log.find("job=toy anchors=768"), std::string::npos) << log;
  EXPECT_NE(ReadFile(StateDir() + "/jobs/toy/job.json").find("\"state\": \"succeeded\""), std::string::npos);
  EXPECT_FALSE(TmuxHasSession("gpuctl-toy"));
}

TEST_F(Train, CudaOomBecomesAnEventWithTheNumbers) {
  StartTrainAgent();
  RunResult r = Gpuctl({"train", "start", "--name", "oom", "--", "python3", ToyTrain(), "--steps", "10",
                        "--interval", "0.01", "--simulate-oom-at", "3"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  json job = WaitForEnd("oom");
  EXPECT_EQ(job["state"], "failed");
  EXPECT_EQ(job["exit_code"], 1);
  json oom;
  for (const json& e : job["events"]) {
    if (e["kind"] == "cuda_oom") oom = e;
  }
  ASSERT_FALSE(oom.is_null()) << job.dump(2);
  EXPECT_EQ(oom["gpu"], 0);
  EXPECT_EQ(oom["tried_bytes"], 16ull << 30);
  EXPECT_EQ(oom["allocated_bytes"], 128ull << 30);
  EXPECT_EQ(oom["reserved_unallocated_bytes"], 0);
  std::string log = ReadFile(StateDir() + "/jobs/oom/output.log");
  EXPECT_EQ(log.substr(oom["offset"].get<size_t>(), 22), "torch.OutOfMemoryError");
  RunResult text = Gpuctl({"train", "status", "oom"});
  EXPECT_NE(text.out.find("cuda_oom"), std::string::npos) << text.out;
}

// A job whose output has a 1 MiB line, tqdm-style \r redraws and binary bytes.
std::vector<std::string> NoisyJob(int seconds) {
  return {"python3", "-c",
          "import sys,time\n"
          "out=sys.stdout.buffer\n"
          "out.write(b'x'*(1<<20)+b'\\n')\n"
          "for i in range(" + std::to_string(seconds * 20) + "):\n"
          "  out.write(('%d/100 [00:01<00:02, 1.5it/s]\\r' % i).encode()); out.write(bytes(range(256))+b'\\n')\n"
          "  out.flush(); time.sleep(0.05)\n"
          "out.write(b'end without newline')\n"};
}

TEST_F(Train, LogsAreByteForByteFollowedAndTailed) {
  StartTrainAgent();
  std::vector<std::string> start = {"train", "start", "--name", "noisy", "--"};
  for (const std::string& a : NoisyJob(1)) start.push_back(a);
  ASSERT_EQ(Gpuctl(start).exit_code, 0);
  RunResult followed = Gpuctl({"train", "logs", "-f", "noisy"});
  ASSERT_EQ(followed.exit_code, 0) << followed.err;
  std::string log = ReadFile(StateDir() + "/jobs/noisy/output.log");
  ASSERT_GT(log.size(), 1u << 20);
  EXPECT_TRUE(followed.out == log) << "followed " << followed.out.size() << " bytes, log has " << log.size();
  RunResult whole = Gpuctl({"train", "logs", "noisy"});
  EXPECT_TRUE(whole.out == log);
  RunResult from = Gpuctl({"train", "logs", "--from-offset", "1000", "noisy"});
  EXPECT_TRUE(from.out == log.substr(1000));
  RunResult tail = Gpuctl({"train", "logs", "--tail", "2", "noisy"});
  size_t last_nl = log.rfind('\n');
  size_t prev_nl = log.rfind('\n', last_nl - 1);
  EXPECT_TRUE(tail.out == log.substr(prev_nl + 1)) << tail.out.size();
}

TEST_F(Train, SurvivesAgentKill9LogsResumeAndJobIsReadopted) {
  StartTrainAgent();
  std::vector<std::string> start = {"train", "start", "--name", "durable", "--"};
  for (const std::string& a : NoisyJob(3)) start.push_back(a);
  ASSERT_EQ(Gpuctl(start).exit_code, 0);
  std::string followed_path = dir_.path() + "/followed.out";
  BackgroundProcess follower({"sh", "-c", "exec \"$0\" --agent \"$1\" train logs -f durable > \"$2\"",
                              BinaryPath("gpuctl"), address_, followed_path},
                             dir_.path() + "/follower.err");
  std::this_thread::sleep_for(std::chrono::milliseconds(700));
  agent_->Signal(SIGKILL);
  agent_->WaitForExit(std::chrono::seconds(5));
  std::this_thread::sleep_for(std::chrono::milliseconds(700));
  StartTrainAgent();  // same socket, state dir and tmux server
  json running = Status("durable");
  EXPECT_EQ(running["state"], "running") << running.dump(2);
  EXPECT_EQ(follower.WaitForExit(std::chrono::seconds(30)), 0) << ReadFile(dir_.path() + "/follower.err");
  json job = WaitForEnd("durable");
  EXPECT_EQ(job["state"], "succeeded");
  std::string log = ReadFile(StateDir() + "/jobs/durable/output.log");
  std::string followed = ReadFile(followed_path);
  EXPECT_EQ(followed.size(), log.size());
  EXPECT_TRUE(followed == log) << "the resumed stream lost or repeated bytes";
}

TEST_F(Train, JobThatEndedWhileTheAgentWasDownShowsItsRealExitStatus) {
  StartTrainAgent();
  ASSERT_EQ(Gpuctl({"train", "start", "--name", "ends", "--", "sh", "-c", "sleep 1; echo bye; exit 7"}).exit_code, 0);
  agent_->Signal(SIGKILL);
  agent_->WaitForExit(std::chrono::seconds(5));
  std::this_thread::sleep_for(std::chrono::milliseconds(1500));
  StartTrainAgent();
  json job = Status("ends");
  EXPECT_EQ(job["state"], "failed") << job.dump(2);
  EXPECT_EQ(job["exit_code"], 7);
}

TEST_F(Train, StopSendsTermThenKillAfterTheGrace) {
  StartTrainAgent();
  // Ignores SIGTERM: only the SIGKILL after the grace ends it. It says so
  // once the trap is set: a stop before that would end it at once (a race
  // a loaded CI machine lost).
  ASSERT_EQ(Gpuctl({"train", "start", "--name", "stubborn", "--", "sh", "-c",
                    "trap '' TERM; echo ignoring-term; sleep 60 & wait; sleep 60"})
                .exit_code,
            0);
  ASSERT_TRUE(WaitUntil([&] { return ReadFile(StateDir() + "/jobs/stubborn/output.log").find("ignoring-term") !=
                                     std::string::npos; },
                        std::chrono::seconds(10)))
      << "the job never set its trap";
  json before = Status("stubborn");
  ASSERT_EQ(before["state"], "running");
  int64_t pid = before["pid"].get<int64_t>();
  auto t0 = std::chrono::steady_clock::now();
  RunResult r = Gpuctl({"-o", "json", "train", "stop", "stubborn", "--grace", "400ms"});
  auto took = std::chrono::steady_clock::now() - t0;
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(json::parse(r.out)["state"], "stopped");
  EXPECT_GE(std::chrono::duration_cast<std::chrono::milliseconds>(took).count(), 400);
  EXPECT_FALSE(ProcessRunning(pid)) << "the job's process survived the stop";
  EXPECT_FALSE(TmuxHasSession("gpuctl-stubborn"));

  ASSERT_EQ(Gpuctl({"train", "start", "--name", "polite", "--", "sleep", "60"}).exit_code, 0);
  r = Gpuctl({"-o", "json", "train", "stop", "polite"});
  json stopped = json::parse(r.out);
  EXPECT_EQ(stopped["state"], "stopped");
  EXPECT_EQ(stopped["exit_code"], 143);  // SIGTERM, recorded by the wrapper
}

// A stop gives the trainer its SIGTERM once and the whole grace, whatever
// wrapper starts it: a shell that does not exec, --script, or none. The
// trainer's handler "saves a checkpoint" for 2 s, counting every SIGTERM
// and SIGHUP it gets (a second SIGTERM means "exit now" to many trainers;
// a SIGHUP came from the pane closing when the wrapper died first).
TEST_F(Train, AStopGivesTheTrainerOneSigtermAndItsGraceThroughAnyWrapper) {
  StartTrainAgent();
  dir_.WriteFile("trainer.py",
                 "import signal, sys, time\n"
                 "out = sys.argv[1]\n"
                 "def note(what):\n"
                 "    with open(out + '.' + what, 'a') as f: f.write(what + '\\n')\n"
                 "terms = 0\n"
                 "def on_term(sig, frame):\n"
                 "    global terms\n"
                 "    terms += 1\n"
                 "    note('term')\n"
                 "    if terms > 1: return\n"
                 "    time.sleep(2)\n"
                 "    with open(out, 'w') as f: f.write('saved\\n')\n"
                 "    sys.exit(0)\n"
                 "signal.signal(signal.SIGTERM, on_term)\n"
                 "signal.signal(signal.SIGHUP, lambda sig, frame: note('hup'))\n"
                 "print('ready', flush=True)\n"
                 "while True: time.sleep(0.05)\n");
  const std::string trainer = dir_.path() + "/trainer.py";
  struct Case {
    std::string name;
    std::vector<std::string> how;  // after the job's name
  } cases[] = {
      {"through-bash", {"--", "bash", "-c", "python3 " + trainer + " " + dir_.path() + "/through-bash; echo after"}},
      {"through-sh", {"--", "sh", "-c", "python3 " + trainer + " " + dir_.path() + "/through-sh; echo after"}},
      {"through-script", {"--script", dir_.path() + "/run.sh"}},
      {"direct", {"--", "python3", trainer, dir_.path() + "/direct"}},
  };
  dir_.WriteFile("run.sh", "#!/bin/bash\npython3 " + trainer + " " + dir_.path() + "/through-script\necho after\n");
  ASSERT_EQ(chmod((dir_.path() + "/run.sh").c_str(), 0755), 0);
  for (const Case& c : cases) {
    SCOPED_TRACE(c.name);
    std::vector<std::string> start = {"train", "start", "--name", c.name};
    start.insert(start.end(), c.how.begin(), c.how.end());
    RunResult started = Gpuctl(start);
    ASSERT_EQ(started.exit_code, 0) << started.err;
    const std::string log = StateDir() + "/jobs/" + c.name + "/output.log";
    ASSERT_TRUE(WaitUntil([&] { return ReadFile(log).find("ready") != std::string::npos; }, std::chrono::seconds(10)))
        << ReadFile(log);
    RunResult stopped = Gpuctl({"-o", "json", "train", "stop", c.name, "--grace", "30s"});
    ASSERT_EQ(stopped.exit_code, 0) << stopped.err;
    EXPECT_EQ(json::parse(stopped.out)["state"], "stopped") << stopped.out;
    const std::string out = dir_.path() + "/" + c.name;
    EXPECT_EQ(ReadFile(out), "saved\n") << "the checkpoint was not saved; log:\n" << ReadFile(log);
    EXPECT_EQ(ReadFile(out + ".term"), "term\n") << "SIGTERMs the trainer got";
    EXPECT_EQ(ReadFile(out + ".hup"), "") << "SIGHUPs the trainer got";
  }
}

TEST_F(Train, BadInputIsRefusedWithExit2AndNothingStarts) {
  StartTrainAgent();
  dir_.WriteFile("not-exec.sh", "#!/bin/sh\necho hi\n");
  struct Case {
    std::vector<std::string> args;
    std::string says;
  } cases[] = {
      {{"train", "start", "--name", "bad/name", "--", "true"}, "name"},
      {{"train", "start", "--name", "x", "--script", dir_.path() + "/missing.sh"}, "missing.sh"},
      {{"train", "start", "--name", "x", "--script", dir_.path() + "/not-exec.sh"}, "executable"},
      {{"train", "start", "--name", "x", "--alloc-conf", "expandable_segments:maybe", "--", "true"}, "True or False"},
      {{"train", "start", "--name", "x", "--anchors", "abc", "--", "true"}, "anchors"},
      {{"train", "start", "--name", "x", "--anchors", "0", "--", "true"}, "anchors"},
      {{"train", "start", "--name", "x", "--container", "201", "--", "true"}, "not running"},
      {{"train", "start", "--name", "x", "--container", "999", "--", "true"}, "does not exist"},
      {{"train", "start", "--name", "x", "--no-such-flag", "--", "true"}, "no-such-flag"},
  };
  for (const Case& c : cases) {
    RunResult r = Gpuctl(c.args);
    EXPECT_EQ(r.exit_code, 2) << c.args[3] << ": " << r.err;
    EXPECT_NE(r.err.find(c.says), std::string::npos) << r.err;
  }
  struct stat st {};
  EXPECT_NE(stat((StateDir() + "/jobs/x").c_str(), &st), 0) << "a refused job left files behind";
  ASSERT_EQ(Gpuctl({"train", "start", "--name", "once", "--", "sleep", "30"}).exit_code, 0);
  RunResult again = Gpuctl({"train", "start", "--name", "once", "--", "sleep", "30"});
  EXPECT_EQ(again.exit_code, 2);
  EXPECT_NE(again.err.find("already running"), std::string::npos) << again.err;
  json list = json::parse(Gpuctl({"-o", "json", "train", "list"}).out);
  EXPECT_EQ(list["jobs"].size(), 1u);
}

// gpuctl build through a real agent: what cannot work is refused with exit 2
// and nothing started; a build gets the agent's environment (the user's
// --env winning), the kind build and its budget as its memory limit.
TEST_F(Train, BuildsAreRefusedOrStartedWithTheirEnvironment) {
  StartTrainAgent();
  struct Case {
    std::vector<std::string> args;
    std::string says;
  } cases[] = {
      {{"build", "--name", "b", "--archs", "9.5", "--", "true"}, "not a CUDA arch"},
      {{"build", "--name", "b", "--mem-budget", "64T", "--", "true"}, "a job can have on this host"},
      {{"build", "--name", "b", "--cpus", "100000", "--", "true"}, "--cpus"},
      {{"build", "--name", "b"}, "nothing to build"},
  };
  for (const Case& c : cases) {
    RunResult r = Gpuctl(c.args);
    EXPECT_EQ(r.exit_code, 2) << c.args.back() << ": " << r.err;
    EXPECT_NE(r.err.find(c.says), std::string::npos) << r.err;
  }
  struct stat st {};
  EXPECT_NE(stat((StateDir() + "/jobs/b").c_str(), &st), 0) << "a refused build left files behind";
  if (geteuid() != 0) {
    // Not root: jobs get no memory cgroup, so a build cannot be governed and
    // is refused, saying why (BuildRefusal covers that as root).
    RunResult refused = Gpuctl({"build", "--name", "b", "--", "true"});
    EXPECT_EQ(refused.exit_code, 2) << refused.err;
    EXPECT_NE(refused.err.find("cannot govern a build"), std::string::npos) << refused.err;
    GPUCTL_SKIP() << "needs root for the rest: a build runs in a memory cgroup";
  }

  RunResult r = Gpuctl({"build", "--name", "b", "--archs", "8.0,9.0", "--cpus", "1", "--mem-budget", "1G", "--env",
                        "NVCC_THREADS=7", "--wait", "--", "sh", "-c",
                        "echo $MAX_JOBS $NVCC_THREADS $TORCH_CUDA_ARCH_LIST $FLASH_ATTN_CUDA_ARCHS $GPUCTL_BUILD_BUDGET"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.out, "1 7 8.0;9.0 80;90 1073741824\n");
  json job = Status("b");
  EXPECT_EQ(job["kind"], "build");
  EXPECT_EQ(job["state"], "succeeded");
  EXPECT_EQ(job["build"]["mem_budget_bytes"], uint64_t{1} << 30);
  RunResult failing = Gpuctl({"build", "--name", "f", "--mem-budget", "1G", "--wait", "--", "false"});
  EXPECT_EQ(failing.exit_code, 1) << "a build that ran and failed is not a usage error";
  EXPECT_NE(failing.err.find("did not succeed"), std::string::npos) << failing.err;
}

// An agent with its guard off gives jobs no memory cgroup: `gpuctl build`
// is refused (exit 2, nothing done), saying why. Before, the build
// ran unbounded and ungoverned ("succeeded, 0 compiles, 0 pauses").
TEST_F(Train, AnAgentWithoutItsGuardRefusesBuildsSayingWhy) {
  std::vector<std::string> flags = AgentFlags();
  flags.erase(std::find(flags.begin(), flags.end(), "--guard"), flags.end());  // as root: --guard on --cgroup-parent P
  flags.insert(flags.end(), {"--guard", "off"});
  StartAgent(flags, AgentEnv());
  RunResult r = Gpuctl({"build", "--name", "b", "--mem-budget", "1G", "--", "true"});
  EXPECT_EQ(r.exit_code, 2) << r.err;
  EXPECT_NE(r.err.find("--guard off"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("cannot govern a build"), std::string::npos) << r.err;
  json list = json::parse(Gpuctl({"-o", "json", "train", "list"}).out);
  EXPECT_EQ(list["jobs"].size(), 0u) << list.dump(2);
}

TEST_F(Train, ContainerJobsRunThroughPctExecAndLogThroughTheRootfs) {
  StartTrainAgent();
  dir_.MakeDir("lxc/200/rootfs");
  RunResult r = Gpuctl({"train", "start", "--name", "inct", "--container", "200", "--", "sh", "-c",
                        "echo inside $GPUCTL_JOB; exit 3"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  json job = WaitForEnd("inct");
  EXPECT_EQ(job["state"], "failed");
  EXPECT_EQ(job["exit_code"], 3);
  RunResult logs = Gpuctl({"train", "logs", "inct"});
  EXPECT_EQ(logs.out, "inside inct\n");
  std::string invoked = ReadFile(dir_.path() + "/pct.log");
  EXPECT_NE(invoked.find("status 200"), std::string::npos) << invoked;
  EXPECT_NE(invoked.find("exec 200 -- env"), std::string::npos) << invoked;
  EXPECT_EQ(ReadFile(dir_.path() + "/lxc/200/rootfs/var/lib/gpuctl/jobs/inct/output.log"), "inside inct\n");
}

}  // namespace
}  // namespace gpuctl::testing
