// JobLauncher over its seams: tmux, pct (a CommandRunner), processes and
// cgroups are fakes; the job's files are in a temp dir. Planning decides and
// refuses without effect; preparing makes the files and the cgroup; launching
// hands tmux the exact command, with the run id in the session's environment
// and the job's.
#include "agents/train/job_launcher.h"

#include <gtest/gtest.h>
#include <sys/stat.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "agents/sys/cgroup_v2_driver.h"
#include "agents/train/launch_command.h"
#include "tests/fakes/fake_cgroup_driver.h"
#include "tests/fakes/fake_command_runner.h"
#include "tests/fakes/fake_process_control.h"
#include "tests/fakes/fake_tmux.h"
#include "tests/fakes/temp_dir.h"
#include "tests/unit/train/agent_env_fixture.h"
#include "common/units.h"

namespace gpuctl::train {
namespace {

using Argv = std::vector<std::string>;
using testing::FakeCgroupDriver;
using testing::FakeCommandRunner;
using testing::FakeProcessControl;
using testing::FakeTmux;
using testing::TempDir;
namespace fs = std::filesystem;


using gpuctl::testing::ReadText;

class JobLauncherTest : public ::testing::Test {
 protected:
  JobLauncherTest() { cgroups_.Put("/gpuctl", {}); }

  JobLauncherOptions Options(bool with_cgroups = true) {
    JobLauncherOptions o;
    o.lxc_rootfs_template = dir_.path() + "/lxc/{vmid}/rootfs";
    o.container_state_dir = "/var/lib/gpuctl";
    o.pct = "/usr/sbin/pct";
    o.cgroups = with_cgroups ? &cgroups_ : nullptr;
    o.cgroup_parent = "/gpuctl";
    o.default_mem_limit_bytes = 8 * kGiB;
    o.tmux_socket = "gpuctl-test";
    o.agent_env = testing::AgentEnvWithPrograms(dir_.path());
    return o;
  }
  JobLauncher Launcher(bool with_cgroups = true) {
    return JobLauncher(Options(with_cgroups), store_, tmux_, processes_, runner_);
  }
  JobSpec Spec() {
    JobSpec spec;
    spec.name = "j1";
    spec.command = {"python", "train.py"};
    spec.cwd = dir_.path();
    spec.gpus = "0";
    return spec;
  }
  // Container 200 runs, and its root is where the template says.
  JobSpec ContainerSpec() {
    runner_.SetResult({"/usr/sbin/pct", "status", "200"}, FakeCommandRunner::Output(0, "status: running\n"));
    dir_.MakeDir("lxc/200/rootfs/srv");
    JobSpec spec = Spec();
    spec.container = "200";
    spec.cwd = "/srv";
    return spec;
  }
  std::string State() const { return dir_.path() + "/state"; }
  std::string Rootfs() const { return dir_.path() + "/lxc/200/rootfs"; }
  // Planning has no effect: nothing started, no file or cgroup made.
  void ExpectNoEffect() {
    EXPECT_TRUE(tmux_.new_sessions().empty());
    EXPECT_FALSE(fs::exists(State() + "/jobs/j1"));
    EXPECT_FALSE(cgroups_.Get("/gpuctl/j1@r1").has_value());
  }

  TempDir dir_;
  JobStore store_{dir_.path() + "/state"};
  FakeTmux tmux_;
  FakeProcessControl processes_;
  FakeCommandRunner runner_;
  FakeCgroupDriver cgroups_;
};

// ---- Plan ----

TEST_F(JobLauncherTest, PlanPlacesAHostJobInTheStoreWithACgroupOfTheRun) {
  JobLauncher launcher = Launcher();
  Result<Placement> p = launcher.Plan(Spec(), "r1");
  ASSERT_TRUE(p.ok()) << p.status().ToString();
  EXPECT_EQ(p->log_path, State() + "/jobs/j1/output.log");
  EXPECT_EQ(p->exit_path, State() + "/jobs/j1/exit_status");
  EXPECT_EQ(p->inside.log_path, p->log_path) << "a host job sees the paths the agent reads";
  EXPECT_EQ(p->inside.exit_path, p->exit_path);
  // The command leads a session of its own; its pid is kept beside the log.
  EXPECT_EQ(p->inside.pid_path, State() + "/jobs/j1/job_pid");
  EXPECT_EQ(p->pid_path, p->inside.pid_path);
  EXPECT_EQ(p->cgroup, "/gpuctl/j1@r1");
  EXPECT_TRUE(runner_.calls().empty()) << "no pct for a host job";
  ExpectNoEffect();

  Result<Placement> without = Launcher(/*with_cgroups=*/false).Plan(Spec(), "r1");
  ASSERT_TRUE(without.ok()) << without.status().ToString();
  EXPECT_EQ(without->cgroup, "") << "no cgroup driver: no cgroup of its own";
}

TEST_F(JobLauncherTest, PlanPlacesAContainerJobInsideItsRoot) {
  JobSpec spec = ContainerSpec();
  Result<Placement> p = Launcher().Plan(spec, "r1");
  ASSERT_TRUE(p.ok()) << p.status().ToString();
  EXPECT_EQ(p->inside.log_path, "/var/lib/gpuctl/jobs/j1/output.log");
  EXPECT_EQ(p->inside.exit_path, "/var/lib/gpuctl/jobs/j1/exit_status");
  EXPECT_EQ(p->inside.pid_path, "/var/lib/gpuctl/jobs/j1/job_pid");
  EXPECT_EQ(p->log_path, Rootfs() + "/var/lib/gpuctl/jobs/j1/output.log");
  EXPECT_EQ(p->exit_path, Rootfs() + "/var/lib/gpuctl/jobs/j1/exit_status");
  EXPECT_EQ(p->pid_path, Rootfs() + "/var/lib/gpuctl/jobs/j1/job_pid");
  EXPECT_EQ(p->cgroup, "") << "a container job's cgroup is the container's";
  EXPECT_EQ(runner_.argvs(), (std::vector<Argv>{{"/usr/sbin/pct", "status", "200"}}));
  ExpectNoEffect();
}

TEST_F(JobLauncherTest, PlanRefusesAContainerThatDoesNotRun) {
  JobSpec spec = Spec();
  spec.container = "200";
  struct Case {
    const char* what;
    std::optional<sys::CommandOutput> pct;  // nullopt: pct is not installed
    bool rootfs;
    std::string message;
  };
  const std::vector<Case> cases = {
      {"no pct", std::nullopt, true, "cannot check container 200: "},
      {"unknown", FakeCommandRunner::Output(2, "", "Configuration file 'nodes/pve/lxc/200.conf' does not exist\n"),
       true,
       "container 200 does not exist or cannot be queried: Configuration file 'nodes/pve/lxc/200.conf' does not "
       "exist (see pct list)"},
      {"stopped", FakeCommandRunner::Output(0, "status: stopped\n"), true,
       "container 200 is not running (status: stopped); start it with: pct start 200"},
      {"no rootfs", FakeCommandRunner::Output(0, "status: running\n"), false,
       "container 200 runs, but its root filesystem is not at " + dir_.path() +
           "/lxc/200/rootfs (set gpuctld --lxc-rootfs)"},
  };
  for (const Case& c : cases) {
    TempDir fresh;  // a fresh template root for each case
    JobLauncherOptions o = Options();
    o.lxc_rootfs_template = (c.rootfs ? fresh.path() : dir_.path()) + "/lxc/{vmid}/rootfs";
    if (c.rootfs) fresh.MakeDir("lxc/200/rootfs");
    FakeCommandRunner runner;
    if (c.pct) runner.SetResult({"/usr/sbin/pct", "status", "200"}, *c.pct);
    JobLauncher launcher(o, store_, tmux_, processes_, runner);
    Result<Placement> p = launcher.Plan(spec, "r1");
    ASSERT_FALSE(p.ok()) << c.what;
    EXPECT_EQ(p.status().code(), ErrorCode::kFailedPrecondition) << c.what;
    EXPECT_NE(p.status().message().find(c.message), std::string::npos) << c.what << ": " << p.status().message();
  }
  ExpectNoEffect();
}

TEST_F(JobLauncherTest, PlanRefusesScriptsAndDirectoriesThatAreNotThere) {
  dir_.WriteFile("train.sh", "#!/bin/sh\n");
  ASSERT_EQ(::chmod((dir_.path() + "/train.sh").c_str(), 0644), 0);
  dir_.WriteFile("a-file", "");
  dir_.MakeDir("no-sh");
  struct Case {
    const char* what;
    void (*change)(JobSpec&, const std::string& dir);
    std::string message;
  };
  const std::string d = dir_.path();
  const std::vector<Case> cases = {
      {"missing script", [](JobSpec& s, const std::string& dir) { s.script = dir + "/nope.sh"; },
       "--script " + d + "/nope.sh: no such file"},
      {"script not executable", [](JobSpec& s, const std::string& dir) { s.script = dir + "/train.sh"; },
       "--script " + d + "/train.sh is not an executable file (chmod +x " + d + "/train.sh)"},
      {"missing cwd", [](JobSpec& s, const std::string& dir) { s.cwd = dir + "/nope"; },
       "--cwd " + d + "/nope: no such directory"},
      {"cwd a file", [](JobSpec& s, const std::string& dir) { s.cwd = dir + "/a-file"; },
       "--cwd " + d + "/a-file: not a directory"},
      {"PATH without sh", [](JobSpec& s, const std::string& dir) { s.env["PATH"] = dir + "/no-sh"; },
       "--env PATH=" + d + "/no-sh: no sh in it"},
  };
  JobLauncher launcher = Launcher();
  for (const Case& c : cases) {
    JobSpec spec = Spec();
    c.change(spec, d);
    Result<Placement> p = launcher.Plan(spec, "r1");
    ASSERT_FALSE(p.ok()) << c.what;
    EXPECT_EQ(p.status().code(), ErrorCode::kInvalidArgument) << c.what;
    EXPECT_NE(p.status().message().find(c.message), std::string::npos) << c.what << ": " << p.status().message();
  }
  ExpectNoEffect();

  // A PATH with sh in it passes.
  JobSpec with_path = Spec();
  with_path.env["PATH"] = d + "/no-sh:/usr/bin:/bin";
  with_path.command = {"sh", "train.sh"};  // found on that PATH
  EXPECT_TRUE(launcher.Plan(with_path, "r1").ok());
}

TEST_F(JobLauncherTest, PlanLooksForAContainerJobsFilesInsideItsRoot) {
  JobSpec spec = ContainerSpec();
  spec.script = "/opt/train.sh";
  spec.command = {"/opt/train.sh"};
  JobLauncher launcher = Launcher();
  Result<Placement> missing = launcher.Plan(spec, "r1");
  ASSERT_FALSE(missing.ok());
  EXPECT_NE(missing.status().message().find("--script /opt/train.sh: no such file"), std::string::npos)
      << missing.status().message();

  dir_.WriteFile("lxc/200/rootfs/opt/train.sh", "#!/bin/sh\n");
  ASSERT_EQ(::chmod((Rootfs() + "/opt/train.sh").c_str(), 0755), 0);
  EXPECT_TRUE(launcher.Plan(spec, "r1").ok()) << "found in the container's root, not the host's /opt";

  spec.cwd = "/nope";
  Result<Placement> bad_cwd = launcher.Plan(spec, "r1");
  ASSERT_FALSE(bad_cwd.ok());
  EXPECT_EQ(bad_cwd.status().code(), ErrorCode::kInvalidArgument);
  EXPECT_NE(bad_cwd.status().message().find("--cwd /nope: no such directory in container 200"), std::string::npos)
      << bad_cwd.status().message();
}

TEST_F(JobLauncherTest, PlanRefusesWhileTheJobsTmuxSessionExists) {
  JobSpec spec = Spec();
  spec.name = "a.b";
  tmux_.AddSession(TmuxSessionName("a.b"));
  Result<Placement> p = Launcher().Plan(spec, "r1");
  ASSERT_FALSE(p.ok());
  EXPECT_EQ(p.status().code(), ErrorCode::kAlreadyExists);
  // The name tmux itself uses ('.' is '+'), on the agent's socket.
  EXPECT_NE(p.status().message().find("remove it with: tmux -L gpuctl-test kill-session -t gpuctl-a+b"),
            std::string::npos)
      << p.status().message();
}

TEST_F(JobLauncherTest, PlanRefusesACommandTooLongForTmux) {
  JobLauncher launcher = Launcher();
  JobSpec fits = Spec();
  fits.env["BIG"] = std::string(4096, 'x');
  EXPECT_TRUE(launcher.Plan(fits, "r1").ok());
  JobSpec big = Spec();
  big.env["BIG"] = std::string(16 * 1024, 'x');
  Result<Placement> p = launcher.Plan(big, "r1");
  ASSERT_FALSE(p.ok());
  EXPECT_EQ(p.status().code(), ErrorCode::kInvalidArgument);
  EXPECT_NE(p.status().message().find("tmux carries at most 16364"), std::string::npos) << p.status().message();
  ExpectNoEffect();
}

// ---- Prepare ----

TEST_F(JobLauncherTest, PrepareMakesAFreshLogAndTheRunsCgroupWithItsLimit) {
  JobLauncher launcher = Launcher();
  JobSpec spec = Spec();
  Result<Placement> p = launcher.Plan(spec, "r1");
  ASSERT_TRUE(p.ok()) << p.status().ToString();
  ASSERT_TRUE(launcher.Prepare(spec, *p, /*rerun=*/false).ok());
  struct stat st {};
  ASSERT_EQ(::stat((State() + "/jobs/j1").c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 0777, 0700u);
  dir_.WriteFile("state/jobs/j1/exit_status", "0\n");  // as the last run left it
  ASSERT_TRUE(launcher.Prepare(spec, *p, /*rerun=*/false).ok());
  EXPECT_TRUE(fs::is_regular_file(p->log_path));
  EXPECT_EQ(ReadText(p->log_path), "");
  EXPECT_FALSE(fs::exists(p->exit_path)) << "no exit status before the run ends";
  ASSERT_TRUE(cgroups_.Get("/gpuctl/j1@r1").has_value());
  EXPECT_EQ(cgroups_.Get("/gpuctl/j1@r1")->max, 8 * kGiB) << "the agent's default limit";

  spec.mem_limit_bytes = 2 * kGiB;
  Result<Placement> p2 = launcher.Plan(spec, "r2");
  ASSERT_TRUE(p2.ok());
  ASSERT_TRUE(launcher.Prepare(spec, *p2, /*rerun=*/false).ok());
  EXPECT_EQ(cgroups_.Get("/gpuctl/j1@r2")->max, 2 * kGiB) << "the job's own limit";
}

TEST_F(JobLauncherTest, PrepareKeepsTheLastRunsLogOnlyForARerun) {
  JobLauncher launcher = Launcher(/*with_cgroups=*/false);
  JobSpec spec = Spec();
  Result<Placement> p = launcher.Plan(spec, "r1");
  ASSERT_TRUE(p.ok());
  dir_.WriteFile("state/jobs/j1/output.log", "the last run\n");
  ASSERT_TRUE(launcher.Prepare(spec, *p, /*rerun=*/true).ok());
  EXPECT_EQ(ReadText(p->log_path), "");
  EXPECT_EQ(ReadText(p->log_path + ".prev"), "the last run\n");

  dir_.WriteFile("state/jobs/j1/output.log", "this run\n");
  ASSERT_TRUE(fs::remove(p->log_path + ".prev"));
  ASSERT_TRUE(launcher.Prepare(spec, *p, /*rerun=*/false).ok());
  EXPECT_EQ(ReadText(p->log_path), "");
  EXPECT_FALSE(fs::exists(p->log_path + ".prev"));
}

TEST_F(JobLauncherTest, PrepareAdoptsAnExistingCgroupAndSaysWhatFailed) {
  JobLauncher launcher = Launcher();
  JobSpec spec = Spec();
  Result<Placement> p = launcher.Plan(spec, "r1");
  ASSERT_TRUE(p.ok());

  cgroups_.Put("/gpuctl/j1@r1", {});  // left by an agent killed mid-start
  ASSERT_TRUE(launcher.Prepare(spec, *p, false).ok());
  EXPECT_EQ(cgroups_.Get("/gpuctl/j1@r1")->max, 8 * kGiB);

  cgroups_.FailOn(FakeCgroupDriver::Op::kCreate, Status(ErrorCode::kPermissionDenied, "not delegated"));
  Status create = launcher.Prepare(spec, *p, false);
  EXPECT_EQ(create.code(), ErrorCode::kPermissionDenied);
  EXPECT_EQ(create.message(), "creating the job's memory cgroup /gpuctl/j1@r1: not delegated");
  cgroups_.ClearFailures();

  cgroups_.FailOn(FakeCgroupDriver::Op::kSetMemoryMax, FailedPrecondition("busy"));
  Status limit = launcher.Prepare(spec, *p, false);
  EXPECT_EQ(limit.code(), ErrorCode::kFailedPrecondition);
  EXPECT_EQ(limit.message(), "setting the job's memory limit: busy");
}

TEST_F(JobLauncherTest, PrepareLinksAContainerJobsLogIntoTheStore) {
  JobLauncher launcher = Launcher();
  JobSpec spec = ContainerSpec();
  Result<Placement> p = launcher.Plan(spec, "r1");
  ASSERT_TRUE(p.ok()) << p.status().ToString();
  dir_.WriteFile("lxc/200/rootfs/var/lib/gpuctl/jobs/j1/job_pid", "17\n");  // the last run's
  ASSERT_TRUE(launcher.Prepare(spec, *p, false).ok());
  EXPECT_EQ(ReadText(p->log_path), "");
  EXPECT_FALSE(fs::exists(p->pid_path));
  ASSERT_TRUE(fs::is_symlink(State() + "/jobs/j1/output.log"));
  EXPECT_EQ(fs::read_symlink(State() + "/jobs/j1/output.log").string(), p->log_path);
}

TEST_F(JobLauncherTest, AContainerBuildWaitsAtAGateTheAgentAnswers) {
  JobLauncher launcher = Launcher();
  JobSpec spec = ContainerSpec();
  spec.kind = std::string(kJobKindBuild);
  Result<Placement> p = launcher.Plan(spec, "r1");
  ASSERT_TRUE(p.ok()) << p.status().ToString();
  EXPECT_EQ(p->inside.cgroup_procs, "gate:/var/lib/gpuctl/jobs/j1/cgroup_gate");
  EXPECT_EQ(p->cgroup_gate, Rootfs() + "/var/lib/gpuctl/jobs/j1/cgroup_gate");
  EXPECT_EQ(p->cgroup, "") << "made by the agent once the wrapper waits (container_build_gate.h)";
  // The last run's gate and answer go, so this run waits for its own.
  dir_.WriteFile("lxc/200/rootfs/var/lib/gpuctl/jobs/j1/cgroup_gate", "ok\n");
  dir_.WriteFile("lxc/200/rootfs/var/lib/gpuctl/jobs/j1/cgroup_gate.pid", "17\n");
  ASSERT_TRUE(launcher.Prepare(spec, *p, true).ok());
  EXPECT_FALSE(fs::exists(p->cgroup_gate));
  EXPECT_FALSE(fs::exists(p->cgroup_gate + ".pid"));

  // A training job in a container, or a build where jobs have no cgroups: no gate.
  spec.kind = std::string(kJobKindTrain);
  EXPECT_EQ(Launcher().Plan(spec, "r2")->cgroup_gate, "");
  spec.kind = std::string(kJobKindBuild);
  EXPECT_EQ(Launcher(/*with_cgroups=*/false).Plan(spec, "r3")->inside.cgroup_procs, "");
}

TEST_F(JobLauncherTest, PlanRefusesACommandNotOnTheJobsPathNamingIt) {
  JobLauncher launcher = Launcher();
  JobSpec spec = Spec();
  spec.command = {"no-such-trainer", "--lr", "1"};
  Result<Placement> p = launcher.Plan(spec, "r1");
  ASSERT_FALSE(p.ok());
  EXPECT_EQ(p.status().code(), ErrorCode::kInvalidArgument);
  EXPECT_NE(p.status().message().find("'no-such-trainer' not found on the job's PATH (" + dir_.path() + "/fake-bin:"),
            std::string::npos)
      << p.status().message();
  ExpectNoEffect();
  // The job's --env PATH is the one searched.
  spec.command = {"python", "train.py"};
  spec.env["PATH"] = "/usr/bin:/bin";
  EXPECT_EQ(launcher.Plan(spec, "r1").status().code(), ErrorCode::kInvalidArgument);
}

TEST_F(JobLauncherTest, AnEnvironmentTmuxCannotCarrySaysHowMuchIsTheAgents) {
  JobLauncherOptions options = Options();
  (*options.agent_env)["HUGE"] = std::string(15000, 'x');
  JobLauncher launcher(options, store_, tmux_, processes_, runner_);
  Result<Placement> p = launcher.Plan(Spec(), "r1");
  ASSERT_FALSE(p.ok());
  EXPECT_EQ(p.status().code(), ErrorCode::kInvalidArgument);
  EXPECT_NE(p.status().message().find("of them gpuctld's own environment"), std::string::npos)
      << p.status().message();
  ExpectNoEffect();
}

TEST_F(JobLauncherTest, PlanSaysWhatTheRunWillGet) {
  JobLauncher launcher = Launcher();
  JobSpec spec = Spec();
  spec.command = {"python", "train.py", "--max-anchors", "1024"};
  spec.anchors = 768;
  Result<Placement> p = launcher.Plan(spec, "r1");
  ASSERT_TRUE(p.ok()) << p.status().message();
  EXPECT_EQ(p->run_command, (Argv{"python", "train.py", "--max-anchors", "768"}));
  EXPECT_EQ(p->env.set_by_gpuctl.at("GPUCTL_RUN_ID"), "r1");
  EXPECT_EQ(p->env.set_by_gpuctl.at("CUDA_VISIBLE_DEVICES"), "0");
  EXPECT_EQ(p->env.set_by_gpuctl.at("GPUCTL_ANCHORS"), "768");
  EXPECT_FALSE(p->env.set_by_gpuctl.contains("LANG")) << "the agent's, not gpuctl's";
  EXPECT_EQ(p->env.vars.at("LANG"), "C.UTF-8");
}

// ---- Launch ----

TEST_F(JobLauncherTest, LaunchGivesTmuxTheWrappedCommandTheRunIdAndTheCgroup) {
  JobLauncher launcher = Launcher();
  JobSpec spec = Spec();
  Result<Placement> p = launcher.Plan(spec, "r1");
  ASSERT_TRUE(p.ok());
  ASSERT_TRUE(launcher.Launch(spec, *p, "r1").ok());
  std::vector<sys::TmuxSessionSpec> started = tmux_.new_sessions();
  ASSERT_EQ(started.size(), 1u);
  const sys::TmuxSessionSpec& s = started[0];
  EXPECT_EQ(s.session, "gpuctl-j1");
  EXPECT_EQ(s.env, (std::map<std::string, std::string>{{"GPUCTL_RUN_ID", "r1"}}))
      << "the session's own, read back at agent start";
  EXPECT_EQ(s.cwd, "") << "the wrapper enters the cwd itself";
  EXPECT_EQ(s.argv, (Argv{"env", "-i", "CUDA_DEVICE_ORDER=PCI_BUS_ID", "CUDA_VISIBLE_DEVICES=0", "GPUCTL_ATTEMPT=1",
                          "GPUCTL_JOB=j1", "GPUCTL_RUN_ID=r1", "LANG=C.UTF-8",
                          "PATH=" + dir_.path() + "/fake-bin:/usr/bin:/bin", "PYTHONUNBUFFERED=1",
                          "TORCH_NCCL_DEBUG_INFO_PIPE_FILE=" + State() + "/jobs/j1/nccl_trace_pipe_rank_",
                          "TORCH_NCCL_DEBUG_INFO_TEMP_FILE=" + State() + "/jobs/j1/nccl_trace_rank_",
                          "TORCH_NCCL_DUMP_ON_TIMEOUT=1", "TORCH_NCCL_TRACE_BUFFER_SIZE=2000", "sh", "-c",
                          kJobWrapperScript,
                          "gpuctl-job", State() + "/jobs/j1/output.log", State() + "/jobs/j1/exit_status",
                          dir_.path(), "/fake-cgroup/gpuctl/j1@r1/cgroup.procs", State() + "/jobs/j1/job_pid",
                          "python", "train.py"}));
}

TEST_F(JobLauncherTest, LaunchOfAContainerJobGoesThroughPctExecWithThePathsInside) {
  JobLauncher launcher = Launcher();
  JobSpec spec = ContainerSpec();
  Result<Placement> p = launcher.Plan(spec, "r7");
  ASSERT_TRUE(p.ok());
  ASSERT_TRUE(launcher.Launch(spec, *p, "r7").ok());
  ASSERT_EQ(tmux_.new_sessions().size(), 1u);
  EXPECT_EQ(tmux_.new_sessions()[0].argv,
            (Argv{"/usr/sbin/pct", "exec", "200", "--", "env", "CUDA_DEVICE_ORDER=PCI_BUS_ID",
                  "CUDA_VISIBLE_DEVICES=0", "GPUCTL_ATTEMPT=1", "GPUCTL_JOB=j1", "GPUCTL_RUN_ID=r7",
                  "PYTHONUNBUFFERED=1",
                  // NCCL's dumps land where the container's job keeps its files.
                  "TORCH_NCCL_DEBUG_INFO_PIPE_FILE=/var/lib/gpuctl/jobs/j1/nccl_trace_pipe_rank_",
                  "TORCH_NCCL_DEBUG_INFO_TEMP_FILE=/var/lib/gpuctl/jobs/j1/nccl_trace_rank_",
                  "TORCH_NCCL_DUMP_ON_TIMEOUT=1", "TORCH_NCCL_TRACE_BUFFER_SIZE=2000", "sh", "-c", kJobWrapperScript,
                  "gpuctl-job", "/var/lib/gpuctl/jobs/j1/output.log", "/var/lib/gpuctl/jobs/j1/exit_status", "/srv", "",
                  "/var/lib/gpuctl/jobs/j1/job_pid", "python", "train.py"}));
  EXPECT_EQ(tmux_.new_sessions()[0].env, (std::map<std::string, std::string>{{"GPUCTL_RUN_ID", "r7"}}));
}

TEST_F(JobLauncherTest, LaunchReportsTmuxsRefusal) {
  JobLauncher launcher = Launcher(/*with_cgroups=*/false);
  JobSpec spec = Spec();
  Result<Placement> p = launcher.Plan(spec, "r1");
  ASSERT_TRUE(p.ok());
  tmux_.SetNewSessionStatus(NotFound("tmux is not installed"));
  Status s = launcher.Launch(spec, *p, "r1");
  EXPECT_EQ(s.code(), ErrorCode::kNotFound);
  EXPECT_EQ(s.message(), "tmux is not installed");
  // Without a cgroup the wrapper is told to join none.
  ASSERT_EQ(tmux_.new_sessions().size(), 1u);
  const Argv argv = tmux_.new_sessions()[0].argv;
  auto at = std::find(argv.begin(), argv.end(), "gpuctl-job");
  ASSERT_NE(at, argv.end());
  EXPECT_EQ(Argv(at, argv.end()), (Argv{"gpuctl-job", State() + "/jobs/j1/output.log",
                                        State() + "/jobs/j1/exit_status", dir_.path(), "",
                                        State() + "/jobs/j1/job_pid", "python", "train.py"}));
}

// ---- what runs ----

TEST_F(JobLauncherTest, FindPaneGivesThePanesPidAndStartTime) {
  JobLauncher launcher = Launcher();
  EXPECT_EQ(launcher.FindPane("gpuctl-j1").status().code(), ErrorCode::kNotFound);
  tmux_.AddSession("gpuctl-j1");
  tmux_.SetPanePid("gpuctl-j1", 777);
  processes_.AddProcess(777, 777, 123456);
  Result<Pane> pane = launcher.FindPane("gpuctl-j1");
  ASSERT_TRUE(pane.ok()) << pane.status().ToString();
  EXPECT_EQ(pane->pid, 777);
  EXPECT_EQ(pane->start_time, 123456u);
}

TEST_F(JobLauncherTest, FindLiveRunFindsTheSessionItsRunAndTheJobsCgroups) {
  // Real cgroup directories this time: the launcher lists them.
  TempDir mount;
  for (const char* cgroup : {"gpuctl/j1@r1", "gpuctl/j1@r2", "gpuctl/j10@r3", "gpuctl/k@r4"}) mount.MakeDir(cgroup);
  FakeProcessControl pc;
  sys::CgroupV2Driver driver(mount.path(), pc);
  JobLauncherOptions o = Options();
  o.cgroups = &driver;
  JobLauncher launcher(o, store_, tmux_, processes_, runner_);

  LiveRun none = launcher.FindLiveRun("zz");
  EXPECT_EQ(none.session, "");
  EXPECT_EQ(none.run_id, "");
  EXPECT_FALSE(none.pane.has_value());
  EXPECT_TRUE(none.cgroups.empty());

  tmux_.AddSession("gpuctl-j1");
  tmux_.SetSessionEnvironment("gpuctl-j1", "GPUCTL_RUN_ID", "r2");
  tmux_.SetPanePid("gpuctl-j1", 900);
  processes_.AddProcess(900, 900, 55);
  LiveRun live = launcher.FindLiveRun("j1");
  EXPECT_EQ(live.session, "gpuctl-j1");
  EXPECT_EQ(live.run_id, "r2");
  ASSERT_TRUE(live.pane.has_value());
  EXPECT_EQ(live.pane->pid, 900);
  EXPECT_EQ(live.pane->start_time, 55u);
  std::sort(live.cgroups.begin(), live.cgroups.end());
  EXPECT_EQ(live.cgroups, (Argv{"/gpuctl/j1@r1", "/gpuctl/j1@r2"})) << "j10's and k's are not j1's";
}

TEST_F(JobLauncherTest, ContainerPathsFollowTheRootfsTemplate) {
  JobLauncherOptions o = Options();
  o.lxc_rootfs_template = "/var/lib/lxc/{vmid}/rootfs/";
  JobLauncher launcher(o, store_, tmux_, processes_, runner_);
  EXPECT_EQ(launcher.HostPathForContainer("200", "/srv/x"), "/var/lib/lxc/200/rootfs/srv/x");
  EXPECT_EQ(launcher.HostPathForContainer("1234", ""), "/var/lib/lxc/1234/rootfs");

  JobLauncher here = Launcher();
  EXPECT_EQ(here.DefaultContainerCwd("200"), "/") << "no /root in the container";
  dir_.MakeDir("lxc/200/rootfs/root");
  EXPECT_EQ(here.DefaultContainerCwd("200"), "/root");
}

}  // namespace
}  // namespace gpuctl::train
