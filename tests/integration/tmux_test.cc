// The tmux seam against the real tmux, each test on a tmux server socket of
// its own that TearDown kills.
#include "agents/sys/tmux.h"

#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <atomic>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "agents/sys/command_runner.h"
#include "agents/sys/host_fs.h"
#include "agents/sys/proc_stat.h"
#include "agents/sys/process_control.h"
#include "tests/fakes/temp_dir.h"
#include "tests/integration/process_support.h"
#include "tests/fakes/skip_policy.h"

namespace gpuctl::sys {
namespace {

using namespace std::chrono_literals;
using gpuctl::testing::TempDir;
using gpuctl::testing::WaitUntil;

using gpuctl::testing::ReadText;

bool Exists(const std::string& path) { return ::access(path.c_str(), F_OK) == 0; }

class TmuxTest : public ::testing::Test {
 protected:
  void SetUp() override {
    const char* path = std::getenv("PATH");
    if (FindExecutable("tmux", path != nullptr ? path : "/usr/bin:/bin").empty()) {
      GPUCTL_SKIP() << "tmux is not installed (apt-get install tmux)";
    }
    static std::atomic<int> counter{0};
    socket_ = "gpuctl-test-" + std::to_string(::getpid()) + "-" + std::to_string(counter++);
    tmux_ = MakeTmux(*runner_, socket_);
  }

  void TearDown() override {
    if (socket_.empty()) return;
    // Ignored: "no server running" is fine here.
    (void)runner_->Run({"tmux", "-L", socket_, "kill-server"});
    // tmux leaves its socket file behind; do not litter /tmp/tmux-UID.
    const char* tmpdir = std::getenv("TMUX_TMPDIR");
    const std::string dir = std::string(tmpdir != nullptr && *tmpdir != '\0' ? tmpdir : "/tmp") +
                            "/tmux-" + std::to_string(::getuid());
    ::unlink((dir + "/" + socket_).c_str());
  }

  // Starts `argv` in `session` and waits until tmux has its pane.
  int64_t StartSleeper(const std::string& session) {
    Status started = tmux_->NewSession({session, {"/bin/sleep", "300"}, {}, ""});
    EXPECT_TRUE(started.ok()) << started.ToString();
    auto pid = tmux_->PanePid(session);
    EXPECT_TRUE(pid.ok()) << pid.status().ToString();
    return pid.ok() ? *pid : -1;
  }

  std::unique_ptr<CommandRunner> runner_ = MakeSubprocessRunner();
  std::string socket_;
  std::unique_ptr<Tmux> tmux_;
  HostFs fs_{"/"};
  std::unique_ptr<ProcessControl> processes_ = MakeProcessControl(fs_);
};

// If tmux joined the arguments into a command line for a shell, the quotes,
// ';', '$(...)' and '*' would be interpreted and the script itself misparsed.
// tmux itself ends a command at an argument ending in ';' (the rest would
// run as tmux commands: "kill-server") and expands '#' in -c as a format.
TEST_F(TmuxTest, ArgvEnvAndCwdReachTheProgramVerbatim) {
  TempDir out_dir;
  TempDir work_root;
  work_root.MakeDir("w#S #(id);");
  const std::string work_dir = work_root.path() + "/w#S #(id);";
  const std::string out = out_dir.path() + "/args";
  const std::string tricky = "a b;$(echo x)'\"";
  const std::string script =
      "{ printf '%s\\n' \"$@\"; printf 'env=%s\\n' \"$GPUCTL_TEST_VAR\"; printf 'cwd=%s\\n' \"$(/bin/pwd -P)\"; }"
      " > \"$0.tmp\" && mv \"$0.tmp\" \"$0\"";
  TmuxSessionSpec spec{"verbatim",
                       {"/bin/sh", "-c", script, out, tricky, "*", "--flag=x y", "$HOME", ";", "x;", "kill-server",
                        "y\\;", "#S"},
                       {{"GPUCTL_TEST_VAR", "value with spaces $HOME `id` #S;"}},
                       work_dir};
  Status started = tmux_->NewSession(spec);
  ASSERT_TRUE(started.ok()) << started.ToString();
  ASSERT_TRUE(WaitUntil([&] { return Exists(out); }, 10s)) << "the session never wrote " << out;

  const std::string cwd = std::filesystem::canonical(work_dir).string();
  EXPECT_EQ(ReadText(out), tricky + "\n*\n--flag=x y\n$HOME\n;\nx;\nkill-server\ny\\;\n#S\n" +
                              "env=value with spaces $HOME `id` #S;\ncwd=" + cwd + "\n");
}

// tmux runs a lone argument with `sh -c`; the seam must not let it.
TEST_F(TmuxTest, ALoneArgumentRunsAsAProgramNotAShellLine) {
  TempDir dir;
  const std::string out = dir.path() + "/ran";
  const std::string program = dir.path() + "/my job $(false) 'x'.sh";
  dir.WriteFile("my job $(false) 'x'.sh", "#!/bin/sh\necho ran > '" + out + "'\n");
  ASSERT_EQ(::chmod(program.c_str(), 0755), 0);

  Status started = tmux_->NewSession({"lone", {program}, {}, ""});
  ASSERT_TRUE(started.ok()) << started.ToString();
  ASSERT_TRUE(WaitUntil([&] { return Exists(out) && ReadText(out) == "ran\n"; }, 10s))
      << "the program with a shell-looking path did not run";
}

TEST_F(TmuxTest, HasSessionMatchesTheExactNameNotAPrefix) {
  StartSleeper("job10");
  EXPECT_TRUE(tmux_->HasSession("job10"));
  EXPECT_FALSE(tmux_->HasSession("job1"));
  EXPECT_FALSE(tmux_->HasSession("job"));
  EXPECT_EQ(tmux_->PanePid("job1").status().code(), ErrorCode::kNotFound);
  // Killing the prefix must leave job10 alone.
  ASSERT_TRUE(tmux_->KillSession("job1").ok());
  EXPECT_TRUE(tmux_->HasSession("job10"));
}

TEST_F(TmuxTest, PanePidIsTheProgramAndLeadsItsOwnGroup) {
  const int64_t pid = StartSleeper("sleeper");
  ASSERT_GT(pid, 0);
  auto read_stat = [&]() -> Result<ProcStat> {
    auto text = fs_.ReadFile("proc/" + std::to_string(pid) + "/stat");
    if (!text.ok()) return text.status();
    return ParseProcStat(*text);
  };
  // Right after new-session the pane may still be tmux's forked child that
  // has not exec'd yet (comm "tmux: server").
  ASSERT_TRUE(WaitUntil([&] { auto s = read_stat(); return s.ok() && s->comm == "sleep"; }, 10s))
      << "pid " << pid << " never became the program";
  auto stat = read_stat();
  ASSERT_TRUE(stat.ok()) << stat.status().ToString();
  EXPECT_EQ(stat->pgrp, pid) << "the pane's process should lead its own process group";
  EXPECT_EQ(stat->session, pid) << "tmux gives each pane its own session (setsid)";
  EXPECT_TRUE(processes_->Alive(pid));
  EXPECT_TRUE(processes_->GroupAlive(pid));
  EXPECT_NE(pid, static_cast<int64_t>(::getpid()));
}

TEST_F(TmuxTest, KillSessionEndsTheProgram) {
  const int64_t pid = StartSleeper("doomed");
  ASSERT_GT(pid, 0);
  ASSERT_TRUE(processes_->Alive(pid));
  Status killed = tmux_->KillSession("doomed");
  ASSERT_TRUE(killed.ok()) << killed.ToString();
  EXPECT_FALSE(tmux_->HasSession("doomed"));
  EXPECT_TRUE(WaitUntil([&] { return !processes_->Alive(pid); }, 10s)) << "pid " << pid << " outlived its session";
}

TEST_F(TmuxTest, MissingSessionIsNotAnErrorWithOrWithoutAServer) {
  // No server on this socket yet.
  EXPECT_FALSE(tmux_->HasSession("ghost"));
  EXPECT_TRUE(tmux_->KillSession("ghost").ok());
  EXPECT_EQ(tmux_->PanePid("ghost").status().code(), ErrorCode::kNotFound);
  // A server that runs other sessions.
  StartSleeper("other");
  EXPECT_FALSE(tmux_->HasSession("ghost"));
  Status killed = tmux_->KillSession("ghost");
  EXPECT_TRUE(killed.ok()) << killed.ToString();
  EXPECT_EQ(tmux_->PanePid("ghost").status().code(), ErrorCode::kNotFound);
  EXPECT_TRUE(tmux_->HasSession("other"));
}

TEST_F(TmuxTest, DuplicateSessionIsAlreadyExists) {
  StartSleeper("twice");
  Status again = tmux_->NewSession({"twice", {"/bin/sleep", "300"}, {}, ""});
  EXPECT_EQ(again.code(), ErrorCode::kAlreadyExists) << again.ToString();
}

// tmux would rename "run.1" to "run_1" and read '.' in a target as a pane.
TEST_F(TmuxTest, DottedNamesWorkAndDoNotMeetUnderscoredOnes) {
  const int64_t pid = StartSleeper("gpuctl-run.1");
  ASSERT_GT(pid, 0);
  EXPECT_TRUE(tmux_->HasSession("gpuctl-run.1"));
  EXPECT_FALSE(tmux_->HasSession("gpuctl-run_1"));
  const int64_t other = StartSleeper("gpuctl-run_1");
  EXPECT_NE(other, pid);
  ASSERT_TRUE(tmux_->KillSession("gpuctl-run.1").ok());
  EXPECT_FALSE(tmux_->HasSession("gpuctl-run.1"));
  EXPECT_TRUE(tmux_->HasSession("gpuctl-run_1"));
}

TEST_F(TmuxTest, ASessionEndsWhenItsProgramExits) {
  Status started = tmux_->NewSession({"brief", {"/bin/sh", "-c", "exit 0"}, {}, ""});
  ASSERT_TRUE(started.ok()) << started.ToString();
  EXPECT_TRUE(WaitUntil([&] { return !tmux_->HasSession("brief"); }, 10s));
}

}  // namespace
}  // namespace gpuctl::sys
