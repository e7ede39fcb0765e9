// train status tells the truth, end to end (issue 24, items 2, 5, 7): what
// the run really got (run_command, run_env), why it failed (a refused
// command, a named exit, its last log lines), the environment it ran in,
// and a start that replaces an ended job says so.
#include <unistd.h>

#include <filesystem>
#include <fstream>

#include "tests/integration/train_fixture.h"

namespace gpuctl::testing {
namespace {

using nlohmann::json;

class JobTruth : public TrainFixture {
 protected:
  // A stand-in trainer: prints its argv and exits with its last argument's code.
  std::string FakeTrainer() {
    dir_.WriteFile("fake.py", "import sys\nprint('argv', ' '.join(sys.argv[1:]), flush=True)\n");
    return dir_.path() + "/fake.py";
  }
  bool JobDirExists(const std::string& name) const { return std::filesystem::exists(StateDir() + "/jobs/" + name); }
};

TEST_F(JobTruth, RunCommandIsWhatTheJobGotBesideWhatWasAsked) {
  StartTrainAgent();
  RunResult r = Gpuctl({"train", "start", "--name", "a768", "--anchors", "768", "--", "python3", FakeTrainer(),
                        "--max-anchors", "1024"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  json job = WaitForEnd("a768");
  EXPECT_EQ(job["state"], "succeeded") << job.dump(2);
  EXPECT_EQ(job["command"], json({"python3", FakeTrainer(), "--max-anchors", "1024"})) << "what was asked, kept";
  EXPECT_EQ(job["run_command"], json({"python3", FakeTrainer(), "--max-anchors", "768"}));
  EXPECT_EQ(job["run_env"]["GPUCTL_RUN_ID"], job["run_id"]);
  EXPECT_EQ(job["run_env"]["GPUCTL_ANCHORS"], "768");
  EXPECT_NE(ReadFile(StateDir() + "/jobs/a768/output.log").find("argv --max-anchors 768"), std::string::npos);
  RunResult text = Gpuctl({"train", "status", "a768"});
  EXPECT_NE(text.out.find("\nrun command: python3 " + FakeTrainer() + " --max-anchors 768\n"), std::string::npos)
      << text.out;
  EXPECT_NE(text.out.find("\nrun env:    GPUCTL_ANCHORS=768\n"), std::string::npos) << text.out;
  EXPECT_NE(text.out.find("\nstate:      succeeded (exited 0)\n"), std::string::npos) << text.out;
}

TEST_F(JobTruth, ACommandThatCannotBeFoundIsRefusedWithExit2AndNothingStarts) {
  StartTrainAgent();
  dir_.WriteFile("data.txt", "not a program\n");
  struct Case {
    std::vector<std::string> args;
    std::string says;
  } cases[] = {
      {{"train", "start", "--name", "x", "--", "no-such-trainer-24", "--lr", "1"},
       "command 'no-such-trainer-24' not found on the job's PATH ("},
      {{"train", "start", "--name", "x", "--cwd", dir_.path(), "--", "./train.sh"}, "'./train.sh': no such file"},
      {{"train", "start", "--name", "x", "--", dir_.path() + "/data.txt"}, "is not an executable file"},
      {{"train", "start", "--name", "x", "--env", "PATH=/nonexistent:/usr/bin:/bin", "--", "fake-only-elsewhere"},
       "(/nonexistent:/usr/bin:/bin)"},
  };
  for (const Case& c : cases) {
    RunResult r = Gpuctl(c.args);
    EXPECT_EQ(r.exit_code, 2) << r.err;
    EXPECT_NE(r.err.find(c.says), std::string::npos) << r.err;
    EXPECT_EQ(r.out.find("started"), std::string::npos) << r.out;
  }
  EXPECT_FALSE(JobDirExists("x")) << "a refused job left files behind";
  EXPECT_EQ(json::parse(Gpuctl({"-o", "json", "train", "list"}).out)["jobs"].size(), 0u);
  // Relative to --cwd, once it is there.
  dir_.WriteFile("train.sh", "#!/bin/sh\necho trained\n");
  ::chmod((dir_.path() + "/train.sh").c_str(), 0755);
  ASSERT_EQ(Gpuctl({"train", "start", "--name", "rel", "--cwd", dir_.path(), "--", "./train.sh"}).exit_code, 0);
  EXPECT_EQ(WaitForEnd("rel")["state"], "succeeded");
}

TEST_F(JobTruth, ExitsThatMeanTheCommandNeverRanAreNamed) {
  StartTrainAgent();
  dir_.WriteFile("data.txt", "not a program\n");
  struct Case {
    std::string name;
    std::vector<std::string> command;
    std::string reason;
  } cases[] = {
      {"e127", {"sh", "-c", "exit 127"}, "exited 127: command not found"},
      {"e126", {"sh", "-c", "exit 126"}, "exited 126: not executable"},
      // What the agent cannot see in advance: a shell's own lookups.
      {"sh127", {"sh", "-c", "no-such-command-24"}, "exited 127: command not found"},
      {"sh126", {"sh", "-c", dir_.path() + "/data.txt"}, "exited 126: not executable"},
  };
  for (const Case& c : cases) {
    std::vector<std::string> args = {"train", "start", "--name", c.name, "--"};
    args.insert(args.end(), c.command.begin(), c.command.end());
    ASSERT_EQ(Gpuctl(args).exit_code, 0) << c.name;
  }
  for (const Case& c : cases) {
    json job = WaitForEnd(c.name);
    EXPECT_EQ(job["state"], "failed") << c.name;
    EXPECT_EQ(job["state_reason"], c.reason) << c.name;
  }
}

TEST_F(JobTruth, AFailedJobShowsItsLastLogLinesEscaped) {
  StartTrainAgent();
  ASSERT_EQ(Gpuctl({"train", "start", "--name", "tail", "--", "sh", "-c",
                    "for i in 1 2 3 4 5 6 7; do echo line $i; done; printf 'Error: \\033]0;owned\\007 bad\\n'; exit 3"})
                .exit_code,
            0);
  json job = WaitForEnd("tail");
  EXPECT_EQ(job["state"], "failed");
  ASSERT_EQ(job["log_tail"].size(), 5u) << job.dump(2);
  EXPECT_EQ(job["log_tail"][0], "line 4");
  EXPECT_EQ(job["log_tail"][4], "Error: \x1b]0;owned\x07 bad") << "JSON carries the bytes, escaped by JSON";
  RunResult text = Gpuctl({"train", "status", "tail"});
  EXPECT_NE(text.out.find("state:      failed (exited 3)\n  | line 4\n  | line 5\n"), std::string::npos) << text.out;
  EXPECT_EQ(text.out.find('\x1b'), std::string::npos) << "the job's escape sequence reached the terminal";
  EXPECT_NE(text.out.find(" bad\n"), std::string::npos) << text.out;
  // A success keeps none.
  ASSERT_EQ(Gpuctl({"train", "start", "--name", "fine", "--", "sh", "-c", "echo ok"}).exit_code, 0);
  EXPECT_EQ(WaitForEnd("fine")["log_tail"], json::array());
}

TEST_F(JobTruth, AJobGetsTheAgentsEnvironmentLessItsOwnPlusItsEnv) {
  std::map<std::string, std::string> env = AgentEnv();
  env["TRUTH_FROM_AGENT"] = "from-agent";
  env["TRUTH_OVERRIDE"] = "agent";
  env["GPUCTLD_TRUTH_SECRET"] = "agent-only";
  StartAgent(AgentFlags(), env);
  ASSERT_EQ(Gpuctl({"train", "start", "--name", "env", "--env", "TRUTH_OVERRIDE=job", "--", "sh", "-c",
                    "echo \"A=$TRUTH_FROM_AGENT S=${GPUCTLD_TRUTH_SECRET-unset} O=$TRUTH_OVERRIDE R=$GPUCTL_RUN_ID "
                    "T=${TMUX-unset}\""})
                .exit_code,
            0);
  json job = WaitForEnd("env");
  ASSERT_EQ(job["state"], "succeeded") << job.dump(2);
  const std::string log = ReadFile(StateDir() + "/jobs/env/output.log");
  EXPECT_NE(log.find("A=from-agent S=unset O=job R=" + job["run_id"].get<std::string>() + " T=unset"),
            std::string::npos)
      << log;
  // run_env: what gpuctl set, not the agent's or the job's own.
  EXPECT_TRUE(job["run_env"].contains("GPUCTL_RUN_ID"));
  EXPECT_FALSE(job["run_env"].contains("TRUTH_FROM_AGENT"));
  EXPECT_FALSE(job["run_env"].contains("TRUTH_OVERRIDE"));
}

TEST_F(JobTruth, AKillByTheJobsOwnMemoryLimitIsNamed) {
  if (geteuid() != 0) GTEST_SKIP() << "jobs get memory cgroups of their own only when the agent runs as root";
  StartTrainAgent();
  // On a host with swap the kernel would swap the job out rather than kill
  // it: the job (root here) turns swap off for its own cgroup first (v2).
  dir_.WriteFile("hog.py",
                 "import os\n"
                 "for line in open('/proc/self/cgroup'):\n"
                 "    if line.startswith('0::'):\n"
                 "        try:\n"
                 "            open('/sys/fs/cgroup' + line[3:].strip() + '/memory.swap.max', 'w').write('0')\n"
                 "        except OSError:\n"
                 "            pass\n"
                 "x = bytearray(512 << 20)\n"
                 "for i in range(0, len(x), 4096): x[i] = 1\n");
  ASSERT_EQ(Gpuctl({"train", "start", "--name", "hog", "--mem-limit", "64M", "--", "python3", dir_.path() + "/hog.py"})
                .exit_code,
            0);
  json job = WaitForEnd("hog", std::chrono::seconds(60));
  EXPECT_EQ(job["state"], "failed") << job.dump(2);
  EXPECT_EQ(job["state_reason"], "exceeded --mem-limit 64 MiB: killed by signal 9") << job.dump(2);
}

TEST_F(JobTruth, AStartThatReplacesAnEndedJobSaysSo) {
  StartTrainAgent();
  ASSERT_EQ(Gpuctl({"train", "start", "--name", "again", "--", "sh", "-c", "exit 1"}).exit_code, 0);
  EXPECT_EQ(WaitForEnd("again")["state"], "failed");
  RunResult r = Gpuctl({"train", "start", "--name", "again", "--", "sh", "-c", "exit 0"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.out.rfind("replacing the ended job again (failed ", 0), 0u) << r.out;
  EXPECT_NE(r.out.find(": exited 1; its log stays as " + StateDir() + "/jobs/again/output.log.prev)\n"),
            std::string::npos)
      << r.out;
  EXPECT_NE(r.out.find("started job again"), std::string::npos) << r.out;
  // A first start says nothing of the kind; with -o json, stdout stays one document.
  RunResult first = Gpuctl({"train", "start", "--name", "new", "--", "sh", "-c", "exit 0"});
  EXPECT_EQ(first.out.find("replacing"), std::string::npos) << first.out;
  WaitForEnd("again");
  RunResult json_start = Gpuctl({"-o", "json", "train", "start", "--name", "again", "--", "true"});
  ASSERT_EQ(json_start.exit_code, 0) << json_start.err;
  EXPECT_TRUE(json::accept(json_start.out)) << json_start.out;
  EXPECT_NE(json_start.err.find("replacing the ended job again"), std::string::npos) << json_start.err;
}

}  // namespace
}  // namespace gpuctl::testing
