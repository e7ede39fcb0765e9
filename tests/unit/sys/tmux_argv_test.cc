// The tmux seam against a scripted CommandRunner: the argv it builds and how
// it reads tmux's answers. The real tmux is driven in
// tests/integration/tmux_test.cc.
#include <gtest/gtest.h>

#include <deque>

#include "agents/sys/command_runner.h"
#include "agents/sys/tmux.h"

namespace gpuctl::sys {
namespace {

using Argv = std::vector<std::string>;

class ScriptedRunner : public CommandRunner {
 public:
  Result<CommandOutput> Run(const Argv& argv, const RunOptions&) override {
    calls.push_back(argv);
    if (replies.empty()) return CommandOutput{0, 0, "", ""};
    Result<CommandOutput> reply = replies.front();
    replies.pop_front();
    return reply;
  }
  void Reply(int exit_code, std::string out, std::string err = "") {
    replies.push_back(CommandOutput{exit_code, 0, std::move(out), std::move(err)});
  }

  std::vector<Argv> calls;
  std::deque<Result<CommandOutput>> replies;
};

Argv Prefix(std::initializer_list<std::string> rest) {
  Argv argv = {"tmux", "-f", "/dev/null", "-L", "sock"};
  argv.insert(argv.end(), rest);
  return argv;
}

// new-session comes after telling the server to outlive its last session.
Argv NewSessionPrefix(std::initializer_list<std::string> rest) {
  Argv argv = Prefix({"set-option", "-s", "-q", "exit-empty", "off", ";", "new-session"});
  argv.insert(argv.end(), rest);
  return argv;
}

TEST(TmuxArgv, NewSessionPassesArgvEnvAndCwdAsSeparateArguments) {
  ScriptedRunner runner;
  auto tmux = MakeTmux(runner, "sock");
  TmuxSessionSpec spec{"job-1", {"python3", "train.py", "--lr", "a b"}, {{"A", "1"}, {"B", "x y"}}, "/"};
  ASSERT_TRUE(tmux->NewSession(spec).ok());
  ASSERT_EQ(runner.calls.size(), 1u);
  EXPECT_EQ(runner.calls[0], NewSessionPrefix({"-d", "-s", "job-1", "-c", "/", "-e", "A=1", "-e", "B=x y", "--",
                                               "python3", "train.py", "--lr", "a b"}));
}

TEST(TmuxArgv, ALoneArgumentIsExecedNotParsedByAShell) {
  ScriptedRunner runner;
  auto tmux = MakeTmux(runner, "sock");
  ASSERT_TRUE(tmux->NewSession({"j", {"/opt/my job $(x).sh"}, {}, ""}).ok());
  ASSERT_EQ(runner.calls.size(), 1u);
  EXPECT_EQ(runner.calls[0],
            NewSessionPrefix({"-d", "-s", "j", "--", "/bin/sh", "-c", "exec \"$0\"", "/opt/my job $(x).sh"}));
}

// tmux ends a command at an argument ending in ';' (then runs the rest of
// argv as tmux commands) and expands '#' in -c as a format.
TEST(TmuxArgv, SemicolonsAndHashesAreWrittenSoTmuxPassesThemOn) {
  ScriptedRunner runner;
  auto tmux = MakeTmux(runner, "sock");
  ASSERT_TRUE(tmux->NewSession({"j", {"find", ".", "-exec", "rm", "{}", ";", "x;", "kill-server"}, {{"A", "b;"}}, "/"})
                  .ok());
  ASSERT_EQ(runner.calls.size(), 1u);
  EXPECT_EQ(runner.calls[0], NewSessionPrefix({"-d", "-s", "j", "-c", "/", "-e", "A=b\\;", "--", "find", ".", "-exec",
                                               "rm", "{}", "\\;", "x\\;", "kill-server"}));
  ASSERT_TRUE(tmux->NewSession({"k", {"/opt/run;"}, {}, ""}).ok());
  EXPECT_EQ(runner.calls.back(),
            NewSessionPrefix({"-d", "-s", "k", "--", "/bin/sh", "-c", "exec \"$0\"", "/opt/run\\;"}));
}

TEST(TmuxArgv, DotsInNamesBecomePlusForTmux) {
  EXPECT_EQ(TmuxNativeSessionName("gpuctl-run.1.a_b"), "gpuctl-run+1+a_b");
  ScriptedRunner runner;
  auto tmux = MakeTmux(runner, "sock");
  runner.Reply(0, "");
  EXPECT_TRUE(tmux->HasSession("run.1"));
  EXPECT_EQ(runner.calls.back(), Prefix({"has-session", "-t", "=run+1"}));
}

TEST(TmuxArgv, TargetsAskForAnExactName) {
  ScriptedRunner runner;
  auto tmux = MakeTmux(runner, "sock");
  runner.Reply(0, "4242\n");
  auto pid = tmux->PanePid("job1");
  ASSERT_TRUE(pid.ok()) << pid.status().ToString();
  EXPECT_EQ(*pid, 4242);
  EXPECT_EQ(runner.calls.back(), Prefix({"list-panes", "-s", "-t", "=job1:", "-F", "#{pane_pid}"}));
  ASSERT_TRUE(tmux->KillSession("job1").ok());
  EXPECT_EQ(runner.calls.back(), Prefix({"kill-session", "-t", "=job1"}));
}

TEST(TmuxArgv, DuplicateSessionIsAlreadyExists) {
  ScriptedRunner runner;
  auto tmux = MakeTmux(runner, "sock");
  runner.Reply(1, "", "duplicate session: job1\n");
  Status s = tmux->NewSession({"job1", {"sleep", "1"}, {}, ""});
  EXPECT_EQ(s.code(), ErrorCode::kAlreadyExists) << s.ToString();
}

TEST(TmuxArgv, OtherFailuresCarryTmuxStderr) {
  ScriptedRunner runner;
  auto tmux = MakeTmux(runner, "sock");
  runner.Reply(1, "", "error connecting to /tmp/tmux-0/sock (Permission denied)\n");
  Status s = tmux->NewSession({"job1", {"sleep", "1"}, {}, ""});
  EXPECT_EQ(s.code(), ErrorCode::kInternal);
  EXPECT_NE(s.message().find("Permission denied"), std::string::npos) << s.message();
  EXPECT_EQ(runner.calls.size(), 1u) << "a failure that is not the server exiting is not retried";
  runner.Reply(1, "", "error connecting to /tmp/tmux-0/sock (Permission denied)\n");
  EXPECT_FALSE(tmux->KillSession("job1").ok());
}

TEST(TmuxArgv, NoServerAndNoSessionMeanAbsent) {
  for (const char* err : {"no server running on /tmp/tmux-0/sock\n",
                          "error connecting to /tmp/tmux-0/sock (No such file or directory)\n",
                          "error connecting to /tmp/tmux-0/sock (Connection refused)\n",
                          "server exited unexpectedly\n", "server exited\n", "lost server\n",
                          "can't find session: job1\n",
                          "can't find window: job1\n"}) {
    ScriptedRunner runner;
    auto tmux = MakeTmux(runner, "sock");
    runner.Reply(1, "", err);
    EXPECT_FALSE(tmux->HasSession("job1")) << err;
    runner.Reply(1, "", err);
    EXPECT_EQ(tmux->PanePid("job1").status().code(), ErrorCode::kNotFound) << err;
    runner.Reply(1, "", err);
    EXPECT_TRUE(tmux->KillSession("job1").ok()) << err;
  }
}

TEST(TmuxArgv, MissingTmuxBinarySaysHowToInstallIt) {
  ScriptedRunner runner;
  auto tmux = MakeTmux(runner, "sock");
  runner.replies.push_back(NotFound("'tmux' not found on PATH (/usr/bin)"));
  Status s = tmux->NewSession({"job1", {"sleep", "1"}, {}, ""});
  EXPECT_EQ(s.code(), ErrorCode::kNotFound);
  EXPECT_NE(s.message().find("apt-get install tmux"), std::string::npos) << s.message();
}

TEST(TmuxArgv, RejectsBadInputWithoutRunningTmux) {
  ScriptedRunner runner;
  auto tmux = MakeTmux(runner, "sock");
  EXPECT_EQ(tmux->NewSession({"a:b", {"x", "y"}, {}, ""}).code(), ErrorCode::kInvalidArgument);
  EXPECT_EQ(tmux->NewSession({"", {"x", "y"}, {}, ""}).code(), ErrorCode::kInvalidArgument);
  EXPECT_EQ(tmux->NewSession({"ok", {}, {}, ""}).code(), ErrorCode::kInvalidArgument);
  EXPECT_EQ(tmux->NewSession({"ok", {"x", "y"}, {}, "relative"}).code(), ErrorCode::kInvalidArgument);
  EXPECT_EQ(tmux->NewSession({"ok", {"x", "y"}, {}, "/no/such/dir/for/gpuctl"}).code(), ErrorCode::kNotFound);
  EXPECT_EQ(tmux->NewSession({"ok", {"x", "y"}, {{"A=B", "1"}}, ""}).code(), ErrorCode::kInvalidArgument);
  EXPECT_FALSE(tmux->HasSession("a b"));
  EXPECT_EQ(tmux->PanePid("=job").status().code(), ErrorCode::kInvalidArgument);
  EXPECT_EQ(tmux->KillSession("$(x)").code(), ErrorCode::kInvalidArgument);
  EXPECT_TRUE(runner.calls.empty());
}

TEST(TmuxArgv, GarbagePanePidIsAnError) {
  ScriptedRunner runner;
  auto tmux = MakeTmux(runner, "sock");
  runner.Reply(0, "abc\n");
  EXPECT_EQ(tmux->PanePid("job1").status().code(), ErrorCode::kInternal);
}

}  // namespace
}  // namespace gpuctl::sys
