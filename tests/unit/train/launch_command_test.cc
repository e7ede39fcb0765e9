#include "agents/train/launch_command.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <csignal>
#include <thread>
#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <memory>
#include <sstream>
#include <string>
#include <vector>

#include "agents/sys/command_runner.h"
#include "tests/fakes/skip_policy.h"
#include "tests/fakes/temp_dir.h"

namespace gpuctl::train {
namespace {

using Argv = std::vector<std::string>;
using testing::TempDir;
namespace fs = std::filesystem;

JobSpec Spec() {
  JobSpec spec;
  spec.name = "j1";
  spec.command = {"python", "train.py"};
  spec.anchors = 64;
  spec.gpus = "0";
  spec.cwd = "/srv";
  return spec;
}

LaunchPaths Paths(std::string log, std::string exit, std::string cgroup_procs = "", std::string pid_path = "") {
  LaunchPaths paths;
  paths.pid_path = std::move(pid_path);
  paths.log_path = std::move(log);
  paths.exit_path = std::move(exit);
  paths.cgroup_procs = std::move(cgroup_procs);
  return paths;
}

const LaunchPaths kPaths = Paths("/state/jobs/j1/output.log", "/state/jobs/j1/exit_status");

TEST(BuildLaunch, HostArgv) {
  sys::TmuxSessionSpec launch = BuildLaunch(Spec(), kPaths);
  EXPECT_EQ(launch.session, "gpuctl-j1");
  EXPECT_EQ(launch.argv, (Argv{"env", "CUDA_DEVICE_ORDER=PCI_BUS_ID", "CUDA_VISIBLE_DEVICES=0", "GPUCTL_ANCHORS=64", "GPUCTL_ATTEMPT=1", "GPUCTL_JOB=j1",
                               "PYTHONUNBUFFERED=1", "TORCH_NCCL_DUMP_ON_TIMEOUT=1", "TORCH_NCCL_TRACE_BUFFER_SIZE=2000", "sh", "-c", kJobWrapperScript, "gpuctl-job",
                               "/state/jobs/j1/output.log", "/state/jobs/j1/exit_status", "/srv", "", "",
                               "python", "train.py", "--max-anchors", "64"}));
  // The environment travels in argv (so it crosses into containers) and the
  // wrapper enters the cwd itself: tmux gets neither.
  EXPECT_TRUE(launch.env.empty());
  EXPECT_TRUE(launch.cwd.empty());
}

TEST(BuildLaunch, AWholeEnvironmentStartsFromNothing) {
  JobSpec spec = Spec();
  JobEnvironment env = BuildJobEnvironment({{"HOME", "/root"}, {"GPUCTLD_X", "1"}}, spec, {{"GPUCTL_RUN_ID", "r1"}});
  sys::TmuxSessionSpec launch = BuildLaunch(spec, kPaths, "pct", env);
  ASSERT_GE(launch.argv.size(), 4u);
  EXPECT_EQ(launch.argv[0], "env");
  EXPECT_EQ(launch.argv[1], "-i") << "nothing of the tmux server's environment reaches the job";
  auto has = [&](const std::string& arg) { return std::find(launch.argv.begin(), launch.argv.end(), arg) != launch.argv.end(); };
  EXPECT_TRUE(has("HOME=/root"));
  EXPECT_TRUE(has("PATH=" + std::string(kDefaultJobPath)));
  EXPECT_TRUE(has("GPUCTL_RUN_ID=r1"));
  EXPECT_FALSE(has("GPUCTLD_X=1"));
}

TEST(BuildLaunch, EmptyCwdIsPassedAsAnEmptyArgument) {
  JobSpec spec = Spec();
  spec.cwd.clear();
  spec.anchors.reset();
  spec.gpus.clear();
  EXPECT_EQ(BuildLaunch(spec, kPaths).argv,
            (Argv{"env", "GPUCTL_ATTEMPT=1", "GPUCTL_JOB=j1", "PYTHONUNBUFFERED=1", "TORCH_NCCL_DUMP_ON_TIMEOUT=1", "TORCH_NCCL_TRACE_BUFFER_SIZE=2000", "sh", "-c", kJobWrapperScript, "gpuctl-job",
                  "/state/jobs/j1/output.log", "/state/jobs/j1/exit_status", "", "", "", "python", "train.py"}));
}

TEST(BuildLaunch, ContainerArgvGoesThroughPctExec) {
  JobSpec spec = Spec();
  spec.container = "200";
  spec.command = {"python", "train.py", "a b;$(touch pwned)'\""};
  LaunchPaths inside = Paths("/var/lib/gpuctl/jobs/j1/output.log", "/var/lib/gpuctl/jobs/j1/exit_status");
  inside.pid_path = "/var/lib/gpuctl/jobs/j1/job_pid";
  sys::TmuxSessionSpec launch = BuildLaunch(spec, inside, "/usr/sbin/pct");
  EXPECT_EQ(launch.session, "gpuctl-j1");
  EXPECT_EQ(launch.argv,
            (Argv{"/usr/sbin/pct", "exec", "200", "--", "env", "CUDA_DEVICE_ORDER=PCI_BUS_ID", "CUDA_VISIBLE_DEVICES=0", "GPUCTL_ANCHORS=64",
                  "GPUCTL_ATTEMPT=1", "GPUCTL_JOB=j1", "PYTHONUNBUFFERED=1", "TORCH_NCCL_DUMP_ON_TIMEOUT=1", "TORCH_NCCL_TRACE_BUFFER_SIZE=2000", "sh", "-c", kJobWrapperScript, "gpuctl-job",
                  "/var/lib/gpuctl/jobs/j1/output.log", "/var/lib/gpuctl/jobs/j1/exit_status", "/srv", "",
                  "/var/lib/gpuctl/jobs/j1/job_pid", "python", "train.py", "a b;$(touch pwned)'\"", "--max-anchors",
                  "64"}));
  EXPECT_EQ(BuildLaunch(spec, inside).argv.front(), "pct");
}

TEST(BuildLaunch, CgroupProcsFollowsTheCwd) {
  sys::TmuxSessionSpec launch =
      BuildLaunch(Spec(), Paths("/l", "/e", "/sys/fs/cgroup/gpuctl/j1/cgroup.procs"));
  auto c = std::find(launch.argv.begin(), launch.argv.end(), "gpuctl-job");
  ASSERT_NE(c, launch.argv.end());
  EXPECT_EQ(Argv(c, launch.argv.end()), (Argv{"gpuctl-job", "/l", "/e", "/srv", "/sys/fs/cgroup/gpuctl/j1/cgroup.procs",
                                              "", "python", "train.py", "--max-anchors", "64"}));
}

TEST(BuildLaunch, UserInputNeverEntersTheScript) {
  JobSpec spec = Spec();
  spec.env = {{"EVIL", "$(reboot)"}};
  spec.command = {"sh", "-c", "rm -rf /"};
  sys::TmuxSessionSpec launch = BuildLaunch(spec, kPaths);
  auto c = std::find(launch.argv.begin(), launch.argv.end(), "-c");
  ASSERT_NE(c, launch.argv.end());
  EXPECT_EQ(*(c + 1), kJobWrapperScript);
  EXPECT_NE(std::find(launch.argv.begin(), launch.argv.end(), "EVIL=$(reboot)"), launch.argv.end());
}

// Runs the wrapper for real: the launch argv, as tmux would, through the
// fork/exec runner (no shell string of ours in between).
class JobWrapperTest : public ::testing::Test {
 protected:
  JobWrapperTest() : log_(dir_.path() + "/out dir/output.log"), exit_(dir_.path() + "/out dir/exit_status") {
    dir_.MakeDir("out dir");
    dir_.MakeDir("work dir");
  }

  // The agent's answer at a build's cgroup gate, written whole and renamed in.
  static void Answer(const std::string& gate, const std::string& text) {
    std::ofstream(gate + ".answer") << text;
    fs::rename(gate + ".answer", gate);
  }

  sys::CommandOutput Launch(Argv command, std::string cwd = "") {
    JobSpec spec;
    spec.name = "wrapped";
    spec.command = std::move(command);
    spec.cwd = cwd.empty() ? dir_.path() + "/work dir" : cwd;
    spec.env = {{"MY_VALUE", "x y $(z)"}};
    sys::RunOptions options;
    options.timeout = std::chrono::seconds(20);
    Result<sys::CommandOutput> out =
        runner_->Run(BuildLaunch(spec, Paths(log_, exit_, cgroup_procs_, pid_path_)).argv, options);
    EXPECT_TRUE(out.ok()) << out.status().message();
    return out.ok() ? *out : sys::CommandOutput{};
  }

  static std::string ReadAll(const std::string& path) { return Read(path); }
  static std::string Read(const std::string& path) {
    std::ifstream in(path, std::ios::binary);
    std::stringstream ss;
    ss << in.rdbuf();
    return ss.str();
  }

  TempDir dir_;
  std::string log_;
  std::string exit_;
  std::string cgroup_procs_;
  std::string pid_path_;  // set: the container form (command in a session of its own)
  std::unique_ptr<sys::CommandRunner> runner_ = sys::MakeSubprocessRunner();
};

TEST_F(JobWrapperTest, OutputAndErrorsGoToTheLogAfterWhatWasThere) {
  dir_.WriteFile("out dir/output.log", "earlier\n");
  sys::CommandOutput out = Launch({"/bin/sh", "-c", "echo out; echo err >&2; printf '%s|%s\\n' \"$MY_VALUE\" "
                                                    "\"$GPUCTL_JOB\"; pwd"});
  EXPECT_EQ(out.exit_code, 0);
  // The pane (our stdout) may get the wrapper's own notes, never the program's output.
  EXPECT_EQ(out.stdout_text.find("out\n"), std::string::npos) << out.stdout_text;
  EXPECT_EQ(out.stdout_text.find("err\n"), std::string::npos) << out.stdout_text;
  EXPECT_EQ(out.stderr_text, "");
  EXPECT_EQ(Read(log_), "earlier\nout\nerr\nx y $(z)|wrapped\n" + dir_.path() + "/work dir\n");
  EXPECT_EQ(Read(exit_), "0\n");
  EXPECT_FALSE(fs::exists(exit_ + ".tmp"));
}

// Run for real under env -i: the job sees the environment it was given and
// nothing of the process that started it.
TEST_F(JobWrapperTest, AWholeEnvironmentIsAllTheJobSees) {
  ASSERT_EQ(::setenv("GPUCTL_TEST_LEAK", "leaked", 1), 0);
  JobSpec spec;
  spec.name = "wrapped";
  spec.command = {"/bin/sh", "-c", "printf '%s|%s|%s\\n' \"${GPUCTL_TEST_LEAK-unset}\" \"$FROM_AGENT\" \"$PATH\""};
  spec.cwd = dir_.path() + "/work dir";
  JobEnvironment env = BuildJobEnvironment({{"FROM_AGENT", "kept"}}, spec, {});
  sys::RunOptions options;
  options.timeout = std::chrono::seconds(20);
  Result<sys::CommandOutput> out =
      runner_->Run(BuildLaunch(spec, Paths(log_, exit_, cgroup_procs_, pid_path_), "pct", env).argv, options);
  ::unsetenv("GPUCTL_TEST_LEAK");
  ASSERT_TRUE(out.ok()) << out.status().message();
  EXPECT_EQ(Read(log_), "unset|kept|" + std::string(kDefaultJobPath) + "\n");
}

TEST_F(JobWrapperTest, RecordsTheExitCode) {
  sys::CommandOutput out = Launch({"/bin/sh", "-c", "exit 7"});
  EXPECT_EQ(Read(exit_), "7\n");
  EXPECT_EQ(out.exit_code, 7);
}

TEST_F(JobWrapperTest, SigtermToTheGroupRecords143) {
  // The runner starts the wrapper as a group leader, as tmux does; `kill 0`
  // signals that whole group, as StopJob does. The wrapper must outlive the
  // program to record how it died.
  sys::CommandOutput out = Launch({"/bin/sh", "-c", "echo started; kill -s TERM 0; sleep 5; echo survived"});
  EXPECT_EQ(Read(exit_), "143\n");
  EXPECT_EQ(out.exit_code, 143);
  std::string log = Read(log_);
  EXPECT_EQ(log.rfind("started\n", 0), 0u) << log;
  EXPECT_EQ(log.find("survived"), std::string::npos) << log;
}

TEST_F(JobWrapperTest, ProgramGetsDefaultSigtermDisposition) {
  // The wrapper's trap must not leak into the program as "ignore".
  Launch({"/bin/sh", "-c", "kill -s TERM $$; echo survived"});
  EXPECT_EQ(Read(exit_), "143\n");
  EXPECT_EQ(Read(log_).find("survived"), std::string::npos);
}

TEST_F(JobWrapperTest, WrapperJoinsTheCgroupBeforeTheProgramStarts) {
  // A plain file stands in for cgroup.procs: the wrapper writes its own pid,
  // which the program (its child) inherits the cgroup from.
  cgroup_procs_ = dir_.path() + "/cgroup.procs";
  dir_.WriteFile("cgroup.procs", "");
  Launch({"/bin/sh", "-c", "echo \"parent $PPID\""});
  std::string procs = ReadAll(cgroup_procs_);
  ASSERT_FALSE(procs.empty());
  EXPECT_EQ(procs.back(), '\n');
  EXPECT_EQ(Read(log_), "parent " + procs);
  EXPECT_EQ(Read(exit_), "0\n");
}

TEST_F(JobWrapperTest, BadCwdRecords126AndRunsNothing) {
  const std::string missing = dir_.path() + "/no such dir";
  sys::CommandOutput out = Launch({"/bin/sh", "-c", "touch '" + dir_.path() + "/ran'"}, missing);
  EXPECT_EQ(out.exit_code, 126);
  EXPECT_EQ(Read(exit_), "126\n");
  EXPECT_NE(Read(log_).find("gpuctl: cannot enter " + missing), std::string::npos) << Read(log_);
  EXPECT_FALSE(fs::exists(dir_.path() + "/ran"));
}

TEST_F(JobWrapperTest, ArgumentsReachTheProgramVerbatim) {
  const std::string hostile = "a b;$(touch pwned)'\"`touch pwned2` *";
  sys::CommandOutput out = Launch({"/usr/bin/printf", "[%s]\\n", hostile, "", "--x=$HOME"});
  EXPECT_EQ(out.exit_code, 0);
  EXPECT_EQ(Read(log_), "[" + hostile + "]\n[]\n[--x=$HOME]\n");
  EXPECT_EQ(Read(exit_), "0\n");
  for (const std::string& where : {dir_.path() + "/work dir", dir_.path(), fs::current_path().string()}) {
    EXPECT_FALSE(fs::exists(where + "/pwned")) << where;
    EXPECT_FALSE(fs::exists(where + "/pwned2")) << where;
  }
}

// The container form: the host's signals stop at pct exec, so the command
// leads a session of its own and its pid is written where the agent reads it.
TEST_F(JobWrapperTest, InTheContainerFormTheCommandLeadsItsOwnSessionAndItsPidIsRecorded) {
  pid_path_ = dir_.path() + "/out dir/job_pid";
  const std::string ids = dir_.path() + "/ids";
  sys::CommandOutput out = Launch({"/bin/sh", "-c", "echo $$ $(cut -d' ' -f5,6 /proc/$$/stat) >'" + ids + "'"});
  EXPECT_EQ(out.exit_code, 0);
  EXPECT_EQ(Read(exit_), "0\n");
  std::istringstream in(Read(ids));
  int64_t pid = 0, pgrp = 0, session = 0;
  ASSERT_TRUE(in >> pid >> pgrp >> session) << Read(ids);
  EXPECT_EQ(Read(pid_path_), std::to_string(pid) + "\n");
  EXPECT_EQ(pgrp, pid);
  EXPECT_EQ(session, pid);
}

// Started in the background, the command still gets SIGINT and SIGQUIT at
// their defaults (sh would leave them ignored for good), where env(1) can.
TEST_F(JobWrapperTest, TheCommandInItsOwnSessionKeepsSigintAndSigquit) {
  pid_path_ = dir_.path() + "/out dir/job_pid";
  sys::CommandOutput probe = Launch({"/bin/sh", "-c", "env --default-signal=INT true"});
  if (probe.exit_code != 0) GPUCTL_SKIP_ALLOWED(kPlatform) << "env without --default-signal (coreutils before 9)";
  const std::string status = dir_.path() + "/status";
  sys::CommandOutput out = Launch({"/bin/sh", "-c", "grep SigIgn /proc/self/status >'" + status + "'"});
  EXPECT_EQ(out.exit_code, 0);
  const std::string line = Read(status);
  ASSERT_EQ(line.rfind("SigIgn:", 0), 0u) << line;
  const uint64_t ignored = std::stoull(line.substr(line.find_first_not_of(" \t", 7)), nullptr, 16);
  EXPECT_EQ(ignored & ((1u << (SIGINT - 1)) | (1u << (SIGQUIT - 1))), 0u) << line;
}

TEST_F(JobWrapperTest, InTheContainerFormASigtermToTheWrapperReachesTheCommandAndRecords143) {
  pid_path_ = dir_.path() + "/out dir/job_pid";
  sys::CommandOutput out;
  std::thread wrapper([&] { out = Launch({"sleep", "30"}); });
  // The wrapper is the command's parent: signal it alone, as lxc-attach
  // forwards a signal to the process it attached.
  int64_t child = 0;
  for (int i = 0; i < 500 && child == 0; ++i) {
    std::istringstream(Read(pid_path_)) >> child;
    if (child == 0) std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  ASSERT_GT(child, 0);
  std::string stat = Read("/proc/" + std::to_string(child) + "/stat");
  std::istringstream fields(stat.substr(stat.rfind(')') + 2));
  char state = 0;
  int64_t wrapper_pid = 0;
  ASSERT_TRUE(fields >> state >> wrapper_pid) << stat;
  ASSERT_EQ(::kill(static_cast<pid_t>(wrapper_pid), SIGTERM), 0);
  wrapper.join();
  EXPECT_EQ(Read(exit_), "143\n");
  EXPECT_NE(::kill(static_cast<pid_t>(child), 0), 0) << "the command outlived its wrapper's stop";
}

// A container build: the wrapper writes its pid at the gate and runs nothing
// until the agent has placed it in its cgroup and answered "ok".
TEST_F(JobWrapperTest, AtTheGateTheCommandWaitsForTheAgentsAnswer) {
  const std::string gate = dir_.path() + "/out dir/cgroup_gate";
  cgroup_procs_ = "gate:" + gate;
  const std::string ran = dir_.path() + "/ran";
  sys::CommandOutput out;
  std::thread wrapper([&] { out = Launch({"/bin/sh", "-c", "echo $PPID >'" + ran + "'"}); });
  int64_t waiting = 0;
  for (int i = 0; i < 500 && waiting == 0; ++i) {
    std::istringstream(Read(gate + ".pid")) >> waiting;
    if (waiting == 0) std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  ASSERT_GT(waiting, 0);
  std::this_thread::sleep_for(std::chrono::milliseconds(200));
  EXPECT_FALSE(fs::exists(ran)) << "the command ran before the agent answered";
  // Written whole, then renamed in, as the agent answers (WriteFileAtomic):
  // the wrapper reads the gate as soon as it exists, and an answer still
  // being written read as an empty reason (exit 125, seen under qemu).
  Answer(gate, "ok\n");
  wrapper.join();
  EXPECT_EQ(out.exit_code, 0);
  EXPECT_EQ(Read(exit_), "0\n");
  // The pid at the gate is the wrapper's: what the agent moves is the
  // command's parent, so the command is born in the cgroup.
  EXPECT_EQ(Read(ran), std::to_string(waiting) + "\n");
}

TEST_F(JobWrapperTest, AGateAnsweredWithAReasonRecords125AndRunsNothing) {
  const std::string gate = dir_.path() + "/out dir/cgroup_gate";
  cgroup_procs_ = "gate:" + gate;
  Answer(gate, "cannot govern the build: no room\n");
  sys::CommandOutput out = Launch({"/bin/sh", "-c", "touch '" + dir_.path() + "/ran'"});
  EXPECT_EQ(out.exit_code, 125);
  EXPECT_EQ(Read(exit_), "125\n");
  EXPECT_NE(Read(log_).find("gpuctl: cannot govern the build: no room"), std::string::npos) << Read(log_);
  EXPECT_FALSE(fs::exists(dir_.path() + "/ran"));
}

}  // namespace
}  // namespace gpuctl::train
