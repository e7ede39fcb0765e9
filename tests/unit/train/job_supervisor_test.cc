#include "agents/train/job_supervisor.h"

#include <gtest/gtest.h>
#include <signal.h>
#include <sys/stat.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <memory>
#include <sstream>
#include <string>
#include <vector>

#include "agents/train/job_store.h"
#include "agents/train/launch_command.h"
#include "tests/fakes/temp_dir.h"
#include "tests/unit/train/job_supervisor_fixture.h"

namespace gpuctl::train {
namespace {

namespace fs = std::filesystem;
using testing::FakeCommandRunner;
using testing::FakeProcessControl;
using testing::ReadFixture;
using test_support::Append;
using test_support::ReadAll;
using test_support::WriteText;
using Signal = FakeProcessControl::SentSignal;
using namespace std::chrono_literals;

class JobSupervisorTest : public test_support::JobSupervisorFixture {
 protected:
  // tmux calls once the supervisor has started (it lists sessions to find
  // orphans): what a refused start must not add to.
  int TmuxCallsAfterStart() {
    Supervisor();
    return tmux_.calls();
  }
};

// --- starting ---

TEST_F(JobSupervisorTest, StartRecordsARunningJob) {
  // tmux makes the pane lead its own group, maybe only after it reported the
  // pid: a ProcessGroup asked too early gives the old group, which must not
  // be what StopJob signals. The pid is the group.
  tmux_.SetOnNewSession([this](const sys::TmuxSessionSpec& spec) {
    tmux_.SetPanePid(spec.session, 5001);
    procs_.AddProcess(5001, 4999, 777);
  });
  JobSpec spec = Spec("run1");
  spec.anchors = 32;
  JobRecord r = StartOk(spec);
  EXPECT_EQ(r.state, JobState::kRunning);
  EXPECT_EQ(r.pid, 5001);
  EXPECT_EQ(r.pgid, 5001);
  EXPECT_EQ(r.pid_start_time, 777u);
  EXPECT_EQ(r.tmux_session, "gpuctl-run1");
  EXPECT_EQ(r.log_path, store_.LogPath("run1"));
  EXPECT_EQ(r.exit_path, store_.ExitPath("run1"));
  EXPECT_EQ(r.created_unix_ms, NowMs());
  EXPECT_EQ(r.started_unix_ms, NowMs());
  EXPECT_EQ(r.restart_count, 0u);
  EXPECT_FALSE(r.stop_requested);
  EXPECT_TRUE(fs::is_regular_file(r.log_path));
  EXPECT_EQ(fs::file_size(r.log_path), 0u);
  EXPECT_FALSE(fs::exists(r.exit_path));

  ASSERT_EQ(tmux_.new_sessions().size(), 1u);
  // No cwd in the spec: the job runs in the supervisor's default_cwd.
  EXPECT_EQ(r.spec.cwd, "/");
  spec.cwd = "/";
  // The run id is in the record, the session's environment and the job's.
  EXPECT_FALSE(r.run_id.empty());
  EXPECT_EQ(tmux_.new_sessions()[0].env.at("GPUCTL_RUN_ID"), r.run_id);
  const JobEnvironment env = BuildJobEnvironment(
      *Options().agent_env, spec,
      {{"GPUCTL_RUN_ID", r.run_id},
       {"TORCH_NCCL_DEBUG_INFO_PIPE_FILE", store_.JobDir("run1") + "/nccl_trace_pipe_rank_"},
       {"TORCH_NCCL_DEBUG_INFO_TEMP_FILE", store_.JobDir("run1") + "/nccl_trace_rank_"}});
  EXPECT_EQ(tmux_.new_sessions()[0].argv,
            BuildLaunch(spec, [&] {
              LaunchPaths paths;
              paths.log_path = store_.LogPath("run1");
              paths.pid_path = store_.JobDir("run1") + "/job_pid";
              paths.exit_path = store_.ExitPath("run1");
              return paths;
            }(), "pct", env).argv);
  // What the run got is in its record: the argv with --anchors applied, and
  // the variables gpuctl set.
  EXPECT_EQ(r.run_command, EffectiveCommand(spec));
  EXPECT_EQ(r.run_env, env.set_by_gpuctl);

  JobRecord disk = OnDisk("run1");
  EXPECT_EQ(disk.state, JobState::kRunning);
  EXPECT_EQ(disk.pid, 5001);
  EXPECT_EQ(disk.pgid, 5001);
  EXPECT_EQ(disk.spec.anchors, 32u);

  EXPECT_EQ(Get("run1").state, JobState::kRunning);
  ASSERT_EQ(Supervisor().ListJobs().size(), 1u);
}

TEST_F(JobSupervisorTest, RunningDuplicateIsRefusedAndChangesNothing) {
  StartOk(Spec("dup"));
  Append(store_.LogPath("dup"), "step 1 | loss 3.0\n");
  Get("dup");  // settles what a refresh would write
  const std::string record_before = ReadAll(store_.JobDir("dup") + "/job.json");
  const std::string log_before = ReadAll(store_.LogPath("dup"));

  Result<JobRecord> again = Supervisor().StartJob(Spec("dup"));
  ASSERT_FALSE(again.ok());
  EXPECT_EQ(again.status().code(), ErrorCode::kAlreadyExists);
  EXPECT_NE(again.status().message().find("already running (pid 5001)"), std::string::npos)
      << again.status().message();
  EXPECT_EQ(tmux_.new_sessions().size(), 1u);
  EXPECT_EQ(ReadAll(store_.JobDir("dup") + "/job.json"), record_before);
  EXPECT_EQ(ReadAll(store_.LogPath("dup")), log_before);
  EXPECT_EQ(Get("dup").pid, 5001);
}

// The wrapper exits 126 when it cannot enter --cwd (gone since the start was
// accepted: a queued job's turn, a relaunch): that is said, not "not
// executable", which sends the user to chmod the wrong thing.
TEST_F(JobSupervisorTest, A126FromACwdThatIsGoneNamesTheCwd) {
  const std::string cwd = dir_.path() + "/work";
  std::filesystem::create_directory(cwd);
  JobSpec spec = Spec("cwdgone");
  spec.cwd = cwd;
  JobRecord job = StartOk(spec);
  std::filesystem::remove(cwd);
  EndJob(job, "126\n");
  JobRecord ended = Get("cwdgone");
  EXPECT_EQ(ended.state, JobState::kFailed);
  EXPECT_EQ(ended.state_reason, "exited 126: cannot enter --cwd " + cwd) << ended.state_reason;

  JobSpec plain = Spec("noexec");
  plain.cwd = dir_.path();
  EndJob(StartOk(plain), "126\n");
  EXPECT_EQ(Get("noexec").state_reason, "exited 126: not executable");
}

TEST_F(JobSupervisorTest, EndedJobCanBeRerun) {
  JobRecord first = StartOk(Spec("again"));
  Append(store_.LogPath("again"), "first run\n");
  EndJob(first, "0\n");
  ASSERT_EQ(Get("again").state, JobState::kSucceeded);

  JobRecord r = StartOk(Spec("again"));
  EXPECT_EQ(r.state, JobState::kRunning);
  EXPECT_EQ(r.restart_count, 1u);
  EXPECT_EQ(r.pid, 5002);
  EXPECT_EQ(r.exit_code, std::nullopt);
  EXPECT_FALSE(fs::exists(store_.ExitPath("again")));
  EXPECT_EQ(ReadAll(store_.LogPath("again")), "");
  EXPECT_EQ(ReadAll(store_.LogPath("again") + ".prev"), "first run\n");
  EXPECT_EQ(Get("again").state, JobState::kRunning);  // the old exit file does not end the new run
}

TEST_F(JobSupervisorTest, BadSpecIsRefusedBeforeTmux) {
  JobSpec spec = Spec("bad name");
  const int calls = TmuxCallsAfterStart();
  Result<JobRecord> r = Supervisor().StartJob(spec);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().code(), ErrorCode::kInvalidArgument);
  EXPECT_EQ(tmux_.calls(), calls);
}

TEST_F(JobSupervisorTest, MissingScriptIsRefusedBeforeTmux) {
  JobSpec spec = Spec("s1");
  spec.script = dir_.path() + "/missing.sh";
  spec.command = {spec.script};
  const int calls = TmuxCallsAfterStart();
  Result<JobRecord> r = Supervisor().StartJob(spec);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().code(), ErrorCode::kInvalidArgument);
  EXPECT_NE(r.status().message().find(spec.script + ": no such file"), std::string::npos) << r.status().message();
  EXPECT_EQ(tmux_.calls(), calls);
  EXPECT_FALSE(fs::exists(store_.JobDir("s1")));
  EXPECT_FALSE(Supervisor().GetJob("s1").ok());
}

TEST_F(JobSupervisorTest, NonExecutableScriptIsRefusedBeforeTmux) {
  JobSpec spec = Spec("s2");
  spec.script = dir_.path() + "/train.sh";
  spec.command = {spec.script};
  MakeScript(spec.script, 0644);
  const int calls = TmuxCallsAfterStart();
  Result<JobRecord> r = Supervisor().StartJob(spec);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().code(), ErrorCode::kInvalidArgument);
  EXPECT_NE(r.status().message().find("chmod +x " + spec.script), std::string::npos) << r.status().message();
  EXPECT_EQ(tmux_.calls(), calls);
  EXPECT_FALSE(fs::exists(store_.JobDir("s2")));

  ASSERT_EQ(::chmod(spec.script.c_str(), 0755), 0);
  JobRecord ok = StartOk(spec);
  EXPECT_EQ(ok.state, JobState::kRunning);
  ASSERT_EQ(tmux_.new_sessions().size(), 1u);
  EXPECT_EQ(tmux_.new_sessions()[0].argv.back(), spec.script);
}

TEST_F(JobSupervisorTest, MissingCwdIsRefused) {
  JobSpec spec = Spec("c1");
  spec.cwd = dir_.path() + "/nowhere";
  const int calls = TmuxCallsAfterStart();
  Result<JobRecord> r = Supervisor().StartJob(spec);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().code(), ErrorCode::kInvalidArgument);
  EXPECT_EQ(tmux_.calls(), calls);
}

// Starts that would fail at once, misleadingly, are refused before anything.
TEST_F(JobSupervisorTest, ImpossibleStartsAreRefusedWithNothingCreated) {
  const int calls = TmuxCallsAfterStart();
  JobSpec file_cwd = Spec("f1");
  file_cwd.cwd = "/etc/passwd";
  Result<JobRecord> r = Supervisor().StartJob(file_cwd);
  EXPECT_EQ(r.status().code(), ErrorCode::kInvalidArgument);
  EXPECT_NE(r.status().message().find("not a directory"), std::string::npos) << r.status().message();
  JobSpec no_sh = Spec("f2");
  no_sh.env["PATH"] = "/nonexistent";
  r = Supervisor().StartJob(no_sh);
  EXPECT_EQ(r.status().code(), ErrorCode::kInvalidArgument);
  EXPECT_NE(r.status().message().find("no sh in it"), std::string::npos) << r.status().message();
  JobSpec empty = Spec("f3");
  empty.command = {""};
  EXPECT_EQ(Supervisor().StartJob(empty).status().code(), ErrorCode::kInvalidArgument);
  EXPECT_EQ(tmux_.calls(), calls);
  for (const char* name : {"f1", "f2", "f3"}) EXPECT_FALSE(fs::exists(store_.JobDir(name))) << name;
  JobSpec ok_path = Spec("f4");
  ok_path.env["PATH"] = "/nonexistent:/usr/bin:/bin";
  ok_path.command = {"sh", "train.sh"};  // found on that PATH
  EXPECT_EQ(StartOk(ok_path).state, JobState::kRunning);
}

// tmux passes a command to its server in one 16 KiB message: a longer one
// is refused before anything is recorded (exit 2), never a failed record.
TEST_F(JobSupervisorTest, ACommandTooLongForTmuxIsRefusedBeforeAnythingExists) {
  const int calls = TmuxCallsAfterStart();
  JobSpec env = Spec("longenv");
  env.env["BIG"] = std::string(20000, 'x');
  JobSpec argv = Spec("longargv");
  for (int i = 0; i < 2000; ++i) argv.command.push_back("--flag-" + std::to_string(i));
  for (const JobSpec& spec : {env, argv}) {
    Result<JobRecord> r = Supervisor().StartJob(spec);
    ASSERT_FALSE(r.ok()) << spec.name;
    EXPECT_EQ(r.status().code(), ErrorCode::kInvalidArgument) << r.status().message();
    EXPECT_NE(r.status().message().find("tmux carries at most"), std::string::npos) << r.status().message();
    EXPECT_FALSE(fs::exists(store_.JobDir(spec.name))) << spec.name;
    EXPECT_EQ(Supervisor().GetJob(spec.name).status().code(), ErrorCode::kNotFound);
  }
  EXPECT_TRUE(tmux_.new_sessions().empty());
  EXPECT_LE(tmux_.calls(), calls + 2) << "at most the has-session checks";
  JobSpec fits = Spec("fits");
  fits.env["BIG"] = std::string(12000, 'x');
  EXPECT_EQ(StartOk(fits).state, JobState::kRunning);
}

TEST_F(JobSupervisorTest, LeftoverTmuxSessionIsRefused) {
  tmux_.AddSession("gpuctl-left");
  Result<JobRecord> r = Supervisor().StartJob(Spec("left"));
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().code(), ErrorCode::kAlreadyExists);
  EXPECT_NE(r.status().message().find("kill-session -t gpuctl-left"), std::string::npos) << r.status().message();
  EXPECT_TRUE(tmux_.new_sessions().empty());
}

// The record comes first: a launch that fails is a run that failed to
// start, said so in its record, never a silent nothing.
TEST_F(JobSupervisorTest, TmuxFailureIsRecordedAsAFailedStart) {
  tmux_.SetNewSessionStatus(Internal("tmux: server exited unexpectedly"));
  Result<JobRecord> r = Supervisor().StartJob(Spec("tf"));
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().code(), ErrorCode::kInternal);
  JobRecord failed = Get("tf");
  EXPECT_EQ(failed.state, JobState::kFailed);
  EXPECT_NE(failed.state_reason.find("could not start: tmux: server exited unexpectedly"), std::string::npos)
      << failed.state_reason;
  EXPECT_EQ(OnDisk("tf").state, JobState::kFailed);
  // The name is free again.
  tmux_.SetNewSessionStatus(Status::Ok());
  EXPECT_EQ(StartOk(Spec("tf")).state, JobState::kRunning);
}

// A record that cannot be saved (a full disk) means nothing is started.
TEST_F(JobSupervisorTest, UnsavableRecordStartsNothing) {
  // A file where the job's directory must go: nothing can be saved there.
  WriteText(store_.JobDir("full"), "not a directory\n");
  Result<JobRecord> r = Supervisor().StartJob(Spec("full"));
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.status().message().find("cannot record job 'full', so it was not started"), std::string::npos)
      << r.status().message();
  EXPECT_TRUE(tmux_.new_sessions().empty());
  EXPECT_EQ(Supervisor().GetJob("full").status().code(), ErrorCode::kNotFound);
}

TEST_F(JobSupervisorTest, PaneGoneAtOnceSettlesFromTheExitFile) {
  // The job ended before tmux could say its pid; its exit file tells how.
  tmux_.SetOnNewSession([this](const sys::TmuxSessionSpec&) { WriteText(store_.ExitPath("quick"), "3\n"); });
  tmux_.SetPanePidStatus(NotFound("no session"));
  JobRecord r = StartOk(Spec("quick"));
  EXPECT_EQ(r.state, JobState::kFailed);
  EXPECT_EQ(r.exit_code, 3);
  EXPECT_EQ(r.pid, 0);
}

// --- containers ---

TEST_F(JobSupervisorTest, ContainerJobRunsThroughPctAndLogsInItsRootfs) {
  runner_.SetResult({"pct", "status", "200"}, FakeCommandRunner::Output(0, "status: running\n"));
  dir_.MakeDir("lxc/200/rootfs");
  JobSpec spec = Spec("ct");
  spec.container = "200";
  JobRecord r = StartOk(spec);
  EXPECT_EQ(r.state, JobState::kRunning);
  EXPECT_EQ(runner_.argvs(), (std::vector<std::vector<std::string>>{{"pct", "status", "200"}}));

  const std::string rootfs = dir_.path() + "/lxc/200/rootfs";
  EXPECT_EQ(r.log_path, rootfs + "/var/lib/gpuctl/jobs/ct/output.log");
  EXPECT_EQ(r.exit_path, rootfs + "/var/lib/gpuctl/jobs/ct/exit_status");
  EXPECT_TRUE(fs::is_regular_file(r.log_path));
  ASSERT_TRUE(fs::is_symlink(store_.LogPath("ct")));
  EXPECT_EQ(fs::read_symlink(store_.LogPath("ct")).string(), r.log_path);

  ASSERT_EQ(tmux_.new_sessions().size(), 1u);
  const std::vector<std::string> argv = tmux_.new_sessions()[0].argv;
  ASSERT_GE(argv.size(), 5u);
  EXPECT_EQ(std::vector<std::string>(argv.begin(), argv.begin() + 5),
            (std::vector<std::string>{"pct", "exec", "200", "--", "env"}));
  // The wrapper is given the paths as the container sees them.
  EXPECT_NE(std::find(argv.begin(), argv.end(), "/var/lib/gpuctl/jobs/ct/output.log"), argv.end());
  EXPECT_NE(std::find(argv.begin(), argv.end(), "/var/lib/gpuctl/jobs/ct/exit_status"), argv.end());

  Append(r.log_path, "step 12 | loss 0.75\n");
  WriteText(r.exit_path, "0\n");
  procs_.KillGroup(r.pgid);
  JobRecord done = Get("ct");
  EXPECT_EQ(done.state, JobState::kSucceeded);
  EXPECT_EQ(done.metrics.step, 12u);
}

// Signals from the host stop at pct exec: stop, the guard and liveness go
// to the command's own group inside, found from the pid its wrapper wrote.
TEST_F(JobSupervisorTest, ContainerStopReachesTheCommandInsideAndWaitsForItToGo) {
  runner_.SetResult({"pct", "status", "200"}, FakeCommandRunner::Output(0, "status: running\n"));
  const std::string rootfs = dir_.path() + "/lxc/200/rootfs";
  dir_.MakeDir("lxc/200/rootfs/root");
  JobSpec spec = Spec("ct");
  spec.container = "200";
  JobRecord r = StartOk(spec);
  EXPECT_EQ(r.spec.cwd, "/root");  // the container's, never the client's
  EXPECT_EQ(r.pid_path, rootfs + "/var/lib/gpuctl/jobs/ct/job_pid");
  const std::vector<std::string> argv = tmux_.new_sessions().at(0).argv;
  EXPECT_NE(std::find(argv.begin(), argv.end(), "/var/lib/gpuctl/jobs/ct/job_pid"), argv.end());

  // The command is pid 17 inside, 7017 here.
  procs_.AddProcess(7017, 7017, 555);
  procs_.MapContainerPid(rootfs, 17, 7017);
  WriteText(r.pid_path, "17\n");
  JobRecord found = Get("ct");
  EXPECT_EQ(found.inner_pid, 7017);
  EXPECT_EQ(found.inner_pgid, 7017);
  EXPECT_EQ(found.inner_start_time, 555u);
  EXPECT_EQ(OnDisk("ct").inner_pgid, 7017);
  std::vector<GuardedJob> guarded = Supervisor().RunningJobs();
  ASSERT_EQ(guarded.size(), 1u);
  EXPECT_EQ(guarded[0].pgid, 7017);

  // The host side (pct exec) going away does not end the job: it runs inside.
  procs_.KillGroup(r.pgid);
  EXPECT_EQ(Get("ct").state, JobState::kRunning);

  procs_.SetReaction(7017, FakeProcessControl::Reaction::kDiesOnSigterm);
  procs_.SetOnSignal([&](const Signal& sent) {
    if (sent.target == 7017 && sent.sig == SIGTERM) WriteText(r.exit_path, "143\n");
  });
  Result<JobRecord> stopped = Supervisor().StopJob("ct", 5s);
  ASSERT_TRUE(stopped.ok()) << stopped.status().message();
  EXPECT_EQ(stopped->state, JobState::kStopped);
  ASSERT_FALSE(procs_.signals().empty());
  EXPECT_EQ(procs_.signals().front(), (Signal{7017, true, SIGTERM}));
}

TEST_F(JobSupervisorTest, AContainerCwdIsCheckedInsideTheContainer) {
  runner_.SetResult({"pct", "status", "200"}, FakeCommandRunner::Output(0, "status: running\n"));
  dir_.MakeDir("lxc/200/rootfs/srv/data");
  JobSpec spec = Spec("ctcwd");
  spec.container = "200";
  spec.cwd = "/srv/missing";
  const int calls = TmuxCallsAfterStart();
  Result<JobRecord> missing = Supervisor().StartJob(spec);
  ASSERT_FALSE(missing.ok());
  EXPECT_EQ(missing.status().code(), ErrorCode::kInvalidArgument);
  EXPECT_NE(missing.status().message().find("no such directory in container 200"), std::string::npos)
      << missing.status().message();
  EXPECT_EQ(tmux_.calls(), calls);
  spec.cwd = "/srv/data";
  EXPECT_EQ(StartOk(spec).spec.cwd, "/srv/data");
}

TEST_F(JobSupervisorTest, ContainerScriptIsCheckedInsideTheRootfs) {
  runner_.SetResult({"pct", "status", "200"}, FakeCommandRunner::Output(0, "status: running\n"));
  dir_.MakeDir("lxc/200/rootfs");
  JobSpec spec = Spec("cts");
  spec.container = "200";
  spec.script = "/opt/train.sh";
  spec.command = {spec.script};
  const int calls = TmuxCallsAfterStart();
  Result<JobRecord> missing = Supervisor().StartJob(spec);
  ASSERT_FALSE(missing.ok());
  EXPECT_EQ(missing.status().code(), ErrorCode::kInvalidArgument);
  EXPECT_EQ(tmux_.calls(), calls);

  MakeScript(dir_.path() + "/lxc/200/rootfs/opt/train.sh", 0755);
  EXPECT_EQ(StartOk(spec).state, JobState::kRunning);
}

TEST_F(JobSupervisorTest, StoppedContainerIsRefused) {
  runner_.SetResult({"pct", "status", "201"}, FakeCommandRunner::Output(0, "status: stopped\n"));
  JobSpec spec = Spec("ct");
  spec.container = "201";
  const int calls = TmuxCallsAfterStart();
  Result<JobRecord> r = Supervisor().StartJob(spec);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().code(), ErrorCode::kFailedPrecondition);
  EXPECT_NE(r.status().message().find("container 201 is not running (status: stopped)"), std::string::npos)
      << r.status().message();
  EXPECT_NE(r.status().message().find("pct start 201"), std::string::npos) << r.status().message();
  EXPECT_EQ(tmux_.calls(), calls);
  EXPECT_FALSE(fs::exists(store_.JobDir("ct")));
}

TEST_F(JobSupervisorTest, MissingContainerIsRefused) {
  runner_.SetProgramResult(
      "pct", FakeCommandRunner::Output(2, "", "Configuration file 'nodes/pve/lxc/999.conf' does not exist\n"));
  JobSpec spec = Spec("ct");
  spec.container = "999";
  const int calls = TmuxCallsAfterStart();
  Result<JobRecord> r = Supervisor().StartJob(spec);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().code(), ErrorCode::kFailedPrecondition);
  EXPECT_NE(r.status().message().find("container 999 does not exist"), std::string::npos) << r.status().message();
  EXPECT_NE(r.status().message().find("'nodes/pve/lxc/999.conf' does not exist (see pct list)"), std::string::npos)
      << r.status().message();
  EXPECT_EQ(tmux_.calls(), calls);
}

TEST_F(JobSupervisorTest, ARunningContainerWithoutItsRootWhereExpectedIsRefusedNamingTheFlag) {
  runner_.SetResult({"pct", "status", "200"}, FakeCommandRunner::Output(0, "status: running\n"));
  JobSpec spec = Spec("noroot");
  spec.container = "200";
  const int calls = TmuxCallsAfterStart();
  Result<JobRecord> r = Supervisor().StartJob(spec);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().code(), ErrorCode::kFailedPrecondition);
  EXPECT_NE(r.status().message().find("--lxc-rootfs"), std::string::npos) << r.status().message();
  EXPECT_EQ(tmux_.calls(), calls);
}

TEST_F(JobSupervisorTest, NoPctIsRefused) {
  JobSpec spec = Spec("ct");
  spec.container = "200";
  const int calls = TmuxCallsAfterStart();
  Result<JobRecord> r = Supervisor().StartJob(spec);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().code(), ErrorCode::kFailedPrecondition);
  EXPECT_NE(r.status().message().find("needs a Proxmox host with pct"), std::string::npos) << r.status().message();
  EXPECT_EQ(tmux_.calls(), calls);
}

// --- settling ---

TEST_F(JobSupervisorTest, ExitZeroSucceeds) {
  JobRecord started = StartOk(Spec("e0"));
  clock_.Advance(90s);
  WriteText(store_.ExitPath("e0"), "0\n");
  procs_.KillGroup(started.pgid);
  JobRecord r = Get("e0");
  EXPECT_EQ(r.state, JobState::kSucceeded);
  EXPECT_EQ(r.exit_code, 0);
  EXPECT_EQ(r.term_signal, std::nullopt);
  EXPECT_EQ(r.state_reason, "exited 0");
  EXPECT_EQ(r.ended_unix_ms, NowMs());
  EXPECT_EQ(OnDisk("e0").state, JobState::kSucceeded);  // saved, not only in memory
}

// The wrapper writes the status just before it exits; what the job left in
// its process group keeps it running (and guarded) until that is gone too.
TEST_F(JobSupervisorTest, ProcessesLeftBehindKeepTheJobRunning) {
  JobRecord started = StartOk(Spec("e3"));
  WriteText(store_.ExitPath("e3"), "3\n");
  procs_.SetAlive(started.pid, false);  // the wrapper is gone, its children (the group) are not
  EXPECT_EQ(Get("e3").state, JobState::kRunning);
  ASSERT_EQ(Supervisor().RunningJobs().size(), 1u);
  procs_.KillGroup(started.pgid);
  JobRecord r = Get("e3");
  EXPECT_EQ(r.state, JobState::kFailed);
  EXPECT_EQ(r.exit_code, 3);
  EXPECT_EQ(r.term_signal, std::nullopt);
  EXPECT_EQ(r.state_reason, "exited 3");
}

TEST_F(JobSupervisorTest, DeathBySignalFails) {
  JobRecord started = StartOk(Spec("e137"));
  WriteText(store_.ExitPath("e137"), "137\n");
  procs_.KillGroup(started.pgid);
  JobRecord r = Get("e137");
  EXPECT_EQ(r.state, JobState::kFailed);
  EXPECT_EQ(r.exit_code, 137);
  EXPECT_EQ(r.term_signal, 9);
  EXPECT_EQ(r.state_reason, "killed by signal 9");
}

TEST_F(JobSupervisorTest, UnreadableExitFileKeepsALiveJobRunning) {
  StartOk(Spec("half"));
  WriteText(store_.ExitPath("half"), "");
  EXPECT_EQ(Get("half").state, JobState::kRunning);
}

// "0abc" is not a success; a FIFO is not a file (and reading it must not
// block): both are reported as unreadable once the job is gone.
TEST_F(JobSupervisorTest, GarbageOrFifoExitStatusIsReportedUnreadable) {
  JobRecord garbage = StartOk(Spec("garbage"));
  WriteText(store_.ExitPath("garbage"), "0abc\n");
  EXPECT_EQ(Get("garbage").state, JobState::kRunning) << "alive: the file does not end it";
  procs_.KillGroup(garbage.pgid);
  JobRecord r = Get("garbage");
  EXPECT_EQ(r.state, JobState::kFailed);
  EXPECT_EQ(r.exit_code, std::nullopt);
  EXPECT_NE(r.state_reason.find("exit status is unreadable"), std::string::npos) << r.state_reason;
  EXPECT_NE(r.state_reason.find("0abc"), std::string::npos) << r.state_reason;

  JobRecord fifo = StartOk(Spec("fifo"));
  ASSERT_EQ(::mkfifo(store_.ExitPath("fifo").c_str(), 0600), 0);
  procs_.KillGroup(fifo.pgid);
  r = Get("fifo");
  EXPECT_EQ(r.state, JobState::kFailed);
  EXPECT_NE(r.state_reason.find("a FIFO"), std::string::npos) << r.state_reason;
}

TEST_F(JobSupervisorTest, GoneWithoutExitFileIsLost) {
  JobRecord started = StartOk(Spec("gone"));
  procs_.KillGroup(started.pgid);
  JobRecord r = Get("gone");
  EXPECT_EQ(r.state, JobState::kLost);
  EXPECT_EQ(r.exit_code, std::nullopt);
  EXPECT_NE(r.state_reason.find("no exit status was written"), std::string::npos) << r.state_reason;
  EXPECT_EQ(OnDisk("gone").state, JobState::kLost);
}

TEST_F(JobSupervisorTest, ReusedPidIsNotOurs) {
  JobRecord started = StartOk(Spec("reused"));
  procs_.SetStartTime(started.pid, *started.pid_start_time + 5000);  // alive, but another process
  EXPECT_EQ(Get("reused").state, JobState::kLost);
}

// --- re-adoption ---

TEST_F(JobSupervisorTest, RestartedAgentReadoptsAndSettles) {
  JobRecord running, finished, vanished, reused;
  {
    auto first = NewSupervisor(clock_);
    for (const char* name : {"running", "finished", "vanished", "reused"}) {
      ASSERT_TRUE(first->StartJob(Spec(name)).ok()) << name;
    }
    running = *first->GetJob("running");
    finished = *first->GetJob("finished");
    vanished = *first->GetJob("vanished");
    reused = *first->GetJob("reused");
  }  // the agent goes away; the jobs (tmux sessions) do not
  WriteText(store_.ExitPath("finished"), "0\n");
  procs_.KillGroup(finished.pgid);
  procs_.KillGroup(vanished.pgid);
  procs_.SetStartTime(reused.pid, 1);

  auto second = NewSupervisor(clock_);
  // Start() settled them and saved the outcome before anyone asked.
  EXPECT_EQ(OnDisk("running").state, JobState::kRunning);
  EXPECT_EQ(OnDisk("finished").state, JobState::kSucceeded);
  EXPECT_EQ(OnDisk("vanished").state, JobState::kLost);
  EXPECT_EQ(OnDisk("reused").state, JobState::kLost);

  Result<JobRecord> r = second->GetJob("running");
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(r->state, JobState::kRunning);
  EXPECT_EQ(r->pid, running.pid);
  EXPECT_EQ(r->pgid, running.pgid);
  EXPECT_EQ(second->ListJobs().size(), 4u);
  // A re-adopted job is still refused as a duplicate.
  EXPECT_EQ(second->StartJob(Spec("running")).status().code(), ErrorCode::kAlreadyExists);
  second->Shutdown();
}

TEST_F(JobSupervisorTest, RestartedAgentResumesTheLogWhereItStopped) {
  const std::string oom = ReadFixture("oom-default.log");
  {
    auto first = NewSupervisor(clock_);
    ASSERT_TRUE(first->StartJob(Spec("resume")).ok());
    Append(store_.LogPath("resume"), oom);
    ASSERT_EQ(first->GetJob("resume")->events.size(), 2u);
  }
  Append(store_.LogPath("resume"), "step 300 | loss 0.125\n");
  auto second = NewSupervisor(clock_);
  Result<JobRecord> r = second->GetJob("resume");
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(r->events.size(), 2u);  // not read twice
  EXPECT_EQ(r->metrics.step, 300u);
  EXPECT_EQ(r->metrics.loss, 0.125);
  EXPECT_EQ(r->parsed_offset, fs::file_size(store_.LogPath("resume")));
  second->Shutdown();
}

// The agent was down while a job wrote its last lines and ended: the list
// (not only a status call) shows what they said once the ticks read them.
TEST_F(JobSupervisorTest, ALogWrittenWhileTheAgentWasDownIsReadAfterItsRestart) {
  JobRecord started;
  {
    auto first = NewSupervisor(clock_);
    started = *first->StartJob(Spec("ended-unseen"));
  }
  Append(started.log_path, ReadFixture("oom-default.log") + "step 41 | loss 0.5\n");
  EndJob(started, "1\n");
  auto second = NewSupervisor(clock_);
  std::vector<JobRecord> listed = second->ListJobs();
  ASSERT_EQ(listed.size(), 1u);
  EXPECT_EQ(listed[0].state, JobState::kFailed);
  EXPECT_EQ(listed[0].metrics.step, 41u);
  ASSERT_EQ(listed[0].events.size(), 2u);  // the cuda_oom and its traceback
  EXPECT_EQ(listed[0].events[0].event.kind, "cuda_oom");
  EXPECT_EQ(listed[0].parsed_offset, listed[0].log_bytes);
  second->Shutdown();
}

TEST_F(JobSupervisorTest, RestartedAgentReadsA143AsAStopWhenOneWasAsked) {
  JobRecord asked, not_asked;
  {
    auto first = NewSupervisor(clock_);
    asked = *first->StartJob(Spec("asked"));
    not_asked = *first->StartJob(Spec("killed"));
  }
  // The agent died during a stop's grace: the request was already saved.
  JobRecord record = OnDisk("asked");
  record.stop_requested = true;
  ASSERT_TRUE(store_.Save(record).ok());
  EndJob(asked, "143\n");
  EndJob(not_asked, "143\n");

  auto second = NewSupervisor(clock_);
  JobRecord stopped = *second->GetJob("asked");
  EXPECT_EQ(stopped.state, JobState::kStopped);
  EXPECT_EQ(stopped.term_signal, 15);
  JobRecord killed = *second->GetJob("killed");
  EXPECT_EQ(killed.state, JobState::kFailed);
  EXPECT_EQ(killed.term_signal, 15);
  EXPECT_EQ(killed.state_reason, "killed by signal 15");
  second->Shutdown();
}

// --- the log ---

TEST_F(JobSupervisorTest, LogEventsCarryExactOffsets) {
  StartOk(Spec("oom"));
  const std::string log = store_.LogPath("oom");
  Append(log, "step 41 | loss 2.5 | 13.8 Ktok/s\n");
  clock_.Advance(5s);
  Append(log, ReadFixture("oom-default.log"));
  JobRecord r = Get("oom");

  const std::string content = ReadAll(log);
  const size_t at = content.find("torch.OutOfMemoryError: CUDA out of memory.");
  ASSERT_NE(at, std::string::npos);
  ASSERT_EQ(r.events.size(), 2u);
  EXPECT_EQ(r.events[0].event.kind, "cuda_oom");
  EXPECT_EQ(r.events[0].event.offset, at);
  EXPECT_EQ(content.substr(at, r.events[0].event.message.size()), r.events[0].event.message);
  EXPECT_EQ(r.events[0].event.tried_bytes, 16ull << 30);
  EXPECT_EQ(r.events[0].event.gpu, 0);
  EXPECT_EQ(r.events[0].time_unix_ms, NowMs());
  EXPECT_EQ(r.events[1].event.kind, "traceback");
  EXPECT_EQ(r.events[1].event.offset, at);
  EXPECT_EQ(r.events[1].event.traceback_offset, content.find("Traceback (most recent call last):"));

  // The fixture's "step 7 allocated ..." lines come after the first line.
  EXPECT_EQ(r.metrics.step, 7u);
  EXPECT_EQ(r.metrics.loss, 2.5);
  EXPECT_EQ(r.metrics.throughput, (Throughput{13800, "tok/s"}));
  EXPECT_EQ(r.log_bytes, content.size());
  EXPECT_EQ(r.parsed_offset, content.size());
  EXPECT_EQ(OnDisk("oom").events.size(), 2u);  // events are saved when found

  Append(log, "step 42 | loss 2.25\n");
  r = Get("oom");
  EXPECT_EQ(r.metrics.step, 42u);
  EXPECT_EQ(r.metrics.loss, 2.25);
  EXPECT_EQ(r.events.size(), 2u);
}

TEST_F(JobSupervisorTest, PartialLastLineWaitsForItsNewline) {
  StartOk(Spec("partial"));
  const std::string log = store_.LogPath("partial");
  Append(log, "step 100 | loss 1.25\n");
  const uint64_t line_start = fs::file_size(log);
  Append(log, "step 200 | loss 0.");
  JobRecord r = Get("partial");
  EXPECT_EQ(r.metrics.step, 100u);
  EXPECT_EQ(r.metrics.loss, 1.25);
  EXPECT_EQ(r.parsed_offset, line_start);
  EXPECT_EQ(r.log_bytes, fs::file_size(log));

  Append(log, "5\n");
  r = Get("partial");
  EXPECT_EQ(r.metrics.step, 200u);
  EXPECT_EQ(r.metrics.loss, 0.5);
  EXPECT_EQ(r.parsed_offset, fs::file_size(log));
}

TEST_F(JobSupervisorTest, OomLineSplitAcrossWritesIsOneEventAtItsStart) {
  StartOk(Spec("split"));
  const std::string log = store_.LogPath("split");
  const std::string fixture = ReadFixture("oom-default.log");
  const size_t cut = fixture.find("GPU 0 has a total");
  ASSERT_NE(cut, std::string::npos);
  Append(log, fixture.substr(0, cut));
  EXPECT_TRUE(Get("split").events.empty());
  Append(log, fixture.substr(cut));
  JobRecord r = Get("split");
  ASSERT_FALSE(r.events.empty());
  EXPECT_EQ(r.events[0].event.kind, "cuda_oom");
  EXPECT_EQ(r.events[0].event.offset, fixture.find("torch.OutOfMemoryError"));
  EXPECT_EQ(r.events[0].event.total_bytes, 150109106995u);
}

TEST_F(JobSupervisorTest, EndedJobsUnterminatedLastLineIsRead) {
  JobRecord started = StartOk(Spec("tail"));
  Append(store_.LogPath("tail"), "step 8 | loss 1.0\nstep 9 | loss 0.75");
  WriteText(store_.ExitPath("tail"), "0\n");
  procs_.KillGroup(started.pgid);
  JobRecord r = Get("tail");
  EXPECT_EQ(r.state, JobState::kSucceeded);
  EXPECT_EQ(r.metrics.step, 9u);
  EXPECT_EQ(r.metrics.loss, 0.75);
  EXPECT_EQ(r.parsed_offset, r.log_bytes);
}

TEST_F(JobSupervisorTest, QuietJobsAreNotRewritten) {
  // Reading a job whose log did not move must not rewrite its record: a
  // `train list` would otherwise fsync every job's file, every time.
  JobRecord job = StartOk(Spec("quiet"));
  Append(job.log_path, "step 1 | loss 1.0\n");
  EndJob(job, "0\n");
  ASSERT_EQ(Get("quiet").state, JobState::kSucceeded);
  // A key the record does not know survives loading; a rewrite drops it.
  const std::string path = store_.JobDir("quiet") + "/job.json";
  const std::string marked = ReadAll(path).insert(1, "\"test_marker\": true,");
  WriteText(path, marked);
  for (int i = 0; i < 3; ++i) {
    clock_.Advance(10s);
    EXPECT_EQ(Get("quiet").state, JobState::kSucceeded);
    EXPECT_EQ(Supervisor().ListJobs().size(), 1u);
  }
  EXPECT_EQ(ReadAll(path), marked) << "job.json was rewritten";
}

TEST_F(JobSupervisorTest, MetricsOnlyProgressIsSavedEveryFewSeconds) {
  JobRecord job = StartOk(Spec("progress"));
  Append(job.log_path, "step 1 | loss 1.0\n");
  Get("progress");
  clock_.Advance(10s);
  Append(job.log_path, "step 2 | loss 0.5\n");
  Get("progress");
  EXPECT_EQ(OnDisk("progress").metrics.step, 2u);
  EXPECT_EQ(OnDisk("progress").parsed_offset, fs::file_size(job.log_path));
}

// --- stopping ---

TEST_F(JobSupervisorTest, StopSendsSigtermAndRecordsHowItEnded) {
  JobRecord started = StartOk(Spec("stopme"));
  // The real wrapper outlives SIGTERM and records the program's 143.
  // The request is on disk before the first signal, so that an agent that
  // dies during the grace still reads the 143 as a stop on its restart.
  bool saved_before_signal = false;
  procs_.SetOnSignal([&](const Signal& s) {
    if (s.group && s.sig == SIGTERM) {
      saved_before_signal = OnDisk("stopme").stop_requested;
      WriteText(store_.ExitPath("stopme"), "143\n");
    }
  });
  Result<JobRecord> r = Supervisor().StopJob("stopme", 5s);
  ASSERT_TRUE(r.ok()) << r.status().message();
  // SIGCONT after SIGTERM: a stopped process (a paused build compile)
  // would not take it otherwise.
  EXPECT_EQ(procs_.signals(), (std::vector<Signal>{{started.pgid, true, SIGTERM}, {started.pgid, true, SIGCONT}}));
  EXPECT_EQ(tmux_.killed(), (std::vector<std::string>{"gpuctl-stopme"}));
  EXPECT_EQ(r->state, JobState::kStopped);
  EXPECT_EQ(r->exit_code, 143);
  EXPECT_EQ(r->term_signal, 15);
  EXPECT_TRUE(r->stop_requested);
  EXPECT_EQ(r->state_reason, "stopped by request");
  EXPECT_TRUE(saved_before_signal);
  JobRecord disk = OnDisk("stopme");
  EXPECT_EQ(disk.state, JobState::kStopped);
  EXPECT_TRUE(disk.stop_requested);
}

TEST_F(JobSupervisorTest, StopEscalatesToSigkillAfterTheGrace) {
  // The grace is measured on the clock, so this one needs a real one.
  supervisor_ = NewSupervisor(real_clock_);
  JobRecord started = StartOk(Spec("stubborn"));
  procs_.SetReaction(started.pgid, FakeProcessControl::Reaction::kDiesOnSigkill);

  auto before = std::chrono::steady_clock::now();
  Result<JobRecord> r = Supervisor().StopJob("stubborn", 150ms);
  auto took = std::chrono::steady_clock::now() - before;
  ASSERT_TRUE(r.ok()) << r.status().message();
  EXPECT_GE(took, 150ms);
  EXPECT_LT(took, 2s);
  EXPECT_EQ(procs_.signals(),
            (std::vector<Signal>{{started.pgid, true, SIGTERM}, {started.pgid, true, SIGCONT},
                                 {started.pgid, true, SIGKILL}}));
  EXPECT_EQ(tmux_.killed(), (std::vector<std::string>{"gpuctl-stubborn"}));
  // SIGKILL took the wrapper too: no exit status, yet it was asked for.
  EXPECT_EQ(r->state, JobState::kStopped);
  EXPECT_EQ(r->exit_code, std::nullopt);
}

TEST_F(JobSupervisorTest, StopWithoutEscalationWhenTheGroupDies) {
  supervisor_ = NewSupervisor(real_clock_);
  JobRecord started = StartOk(Spec("meek"));
  auto before = std::chrono::steady_clock::now();
  ASSERT_TRUE(Supervisor().StopJob("meek", 10s).ok());
  EXPECT_LT(std::chrono::steady_clock::now() - before, 2s);  // did not sit out the grace
  EXPECT_EQ(procs_.signals(), (std::vector<Signal>{{started.pgid, true, SIGTERM}, {started.pgid, true, SIGCONT}}));
}

TEST_F(JobSupervisorTest, StopOfAnEndedJobSignalsNothing) {
  JobRecord started = StartOk(Spec("done"));
  WriteText(store_.ExitPath("done"), "0\n");
  procs_.KillGroup(started.pgid);
  Result<JobRecord> r = Supervisor().StopJob("done", 1s);
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(r->state, JobState::kSucceeded);
  EXPECT_FALSE(r->stop_requested);
  EXPECT_TRUE(procs_.signals().empty());
  EXPECT_TRUE(tmux_.killed().empty());
}

TEST_F(JobSupervisorTest, UnknownJobIsNotFound) {
  EXPECT_EQ(Supervisor().GetJob("ghost").status().code(), ErrorCode::kNotFound);
  EXPECT_EQ(Supervisor().StopJob("ghost", 1s).status().code(), ErrorCode::kNotFound);
  EXPECT_EQ(Supervisor().GetLogSource("ghost").status().code(), ErrorCode::kNotFound);
  EXPECT_NE(Supervisor().GetJob("ghost").status().message().find("'ghost'"), std::string::npos);
}

TEST_F(JobSupervisorTest, LogSourceSaysWhenTheJobEnded) {
  JobRecord started = StartOk(Spec("src"));
  Result<LogSource> s = Supervisor().GetLogSource("src");
  ASSERT_TRUE(s.ok());
  EXPECT_EQ(s->path, store_.LogPath("src"));
  EXPECT_FALSE(s->ended);
  WriteText(store_.ExitPath("src"), "1\n");
  procs_.KillGroup(started.pgid);
  // Followers' end checks are throttled (one per job per 200 ms of real
  // time), so the end shows within a few of them, not necessarily the next.
  bool ended = false;
  for (auto give_up = std::chrono::steady_clock::now() + 5s; !ended && std::chrono::steady_clock::now() < give_up;) {
    ended = Supervisor().GetLogSource("src")->ended;
    if (!ended) std::this_thread::sleep_for(20ms);
  }
  EXPECT_TRUE(ended);
}

}  // namespace
}  // namespace gpuctl::train
