// NewSession against a tmux server that is exiting: tmux's answers are
// scripted per command, so the moment a real server exits (its last session
// just ended) is forced on every run. The real thing is forced in
// tests/integration/tmux_start_test.cc.
#include <gtest/gtest.h>

#include <algorithm>
#include <deque>
#include <map>

#include "agents/sys/command_runner.h"
#include "agents/sys/tmux.h"

namespace gpuctl::sys {
namespace {

using Argv = std::vector<std::string>;

constexpr char kExiting[] = "server exited unexpectedly\n";
constexpr char kNoServer[] = "no server running on /tmp/tmux-0/sock\n";

// Answers each tmux command (new-session, has-session, show-environment)
// from a queue of its own; an empty queue answers exit 0 and no output.
class ScriptedTmux : public CommandRunner {
 public:
  Result<CommandOutput> Run(const Argv& argv, const RunOptions&) override {
    calls.push_back(argv);
    auto& queue = replies[Command(argv)];
    if (queue.empty()) return CommandOutput{0, 0, "", ""};
    CommandOutput reply = queue.front();
    queue.pop_front();
    return reply;
  }
  void Reply(const std::string& command, int exit_code, std::string out, std::string err = "") {
    replies[command].push_back(CommandOutput{exit_code, 0, std::move(out), std::move(err)});
  }
  int Count(const std::string& command) const {
    return static_cast<int>(std::count_if(calls.begin(), calls.end(),
                                          [&](const Argv& argv) { return Command(argv) == command; }));
  }
  // The tmux command of argv, the last one when it holds several.
  static std::string Command(const Argv& argv) {
    for (const char* name : {"new-session", "has-session", "show-environment", "kill-session"}) {
      if (std::find(argv.begin(), argv.end(), name) != argv.end()) return name;
    }
    return argv.size() > 5 ? argv[5] : "";
  }

  std::vector<Argv> calls;
  std::map<std::string, std::deque<CommandOutput>> replies;
};

TmuxSessionSpec Job(const std::string& run_id) {
  return {"gpuctl-rw25", {"/bin/sh", "-c", "echo hi"}, {{"GPUCTL_RUN_ID", run_id}}, ""};
}

std::unique_ptr<Tmux> Make(ScriptedTmux& runner, int attempts = 5) {
  return MakeTmux(runner, "sock", TmuxStartRetry{attempts, std::chrono::milliseconds(0)});
}

TEST(TmuxStart, EveryStartTellsTheServerToOutliveItsLastSession) {
  ScriptedTmux runner;
  auto tmux = Make(runner);
  ASSERT_TRUE(tmux->NewSession(Job("r1")).ok());
  ASSERT_EQ(runner.calls.size(), 1u);
  const Argv& argv = runner.calls[0];
  // One invocation: the option is set before new-session runs.
  const Argv head = {"tmux", "-f", "/dev/null", "-L", "sock", "set-option", "-s", "-q", "exit-empty", "off", ";",
                     "new-session"};
  ASSERT_GE(argv.size(), head.size());
  EXPECT_EQ(Argv(argv.begin(), argv.begin() + static_cast<long>(head.size())), head);
}

TEST(TmuxStart, AServerThatWasExitingIsTriedAgainAfterCheckingTheSession) {
  ScriptedTmux runner;
  auto tmux = Make(runner);
  runner.Reply("new-session", 1, "", kExiting);
  runner.Reply("has-session", 1, "", kNoServer);  // gone with the old server: not started
  Status s = tmux->NewSession(Job("r1"));
  ASSERT_TRUE(s.ok()) << s.ToString();
  ASSERT_EQ(runner.calls.size(), 3u);
  EXPECT_EQ(ScriptedTmux::Command(runner.calls[0]), "new-session");
  EXPECT_EQ(runner.calls[1], (Argv{"tmux", "-f", "/dev/null", "-L", "sock", "has-session", "-t", "=gpuctl-rw25"}));
  EXPECT_EQ(runner.calls[2], runner.calls[0]) << "the same start, tried again";
}

TEST(TmuxStart, EveryWayOfMeetingNoServerIsTriedAgain) {
  for (const char* err : {kExiting, "server exited\n", "lost server\n", kNoServer,
                          "error connecting to /tmp/tmux-0/sock (Connection refused)\n",
                          "error connecting to /tmp/tmux-0/sock (No such file or directory)\n"}) {
    ScriptedTmux runner;
    auto tmux = Make(runner);
    runner.Reply("new-session", 1, "", err);
    runner.Reply("new-session", 1, "", err);
    runner.Reply("has-session", 1, "", kNoServer);
    runner.Reply("has-session", 1, "", kNoServer);
    Status s = tmux->NewSession(Job("r1"));
    EXPECT_TRUE(s.ok()) << err << ": " << s.ToString();
    EXPECT_EQ(runner.Count("new-session"), 3) << err;
  }
}

TEST(TmuxStart, ADuplicateOrAnotherFailureIsNotTriedAgain) {
  {
    ScriptedTmux runner;
    auto tmux = Make(runner);
    runner.Reply("new-session", 1, "", "duplicate session: gpuctl-rw25\n");
    EXPECT_EQ(tmux->NewSession(Job("r1")).code(), ErrorCode::kAlreadyExists);
    EXPECT_EQ(runner.calls.size(), 1u);
  }
  for (const char* err : {"unknown command: x\n",
                          "create window failed: fork failed: Resource temporarily unavailable\n",
                          "error connecting to /tmp/tmux-0/sock (Permission denied)\n"}) {
    ScriptedTmux runner;
    auto tmux = Make(runner);
    runner.Reply("new-session", 1, "", err);
    Status s = tmux->NewSession(Job("r1"));
    EXPECT_EQ(s.code(), ErrorCode::kInternal) << err;
    EXPECT_EQ(runner.calls.size(), 1u) << err;
  }
}

// The server ran new-session and the reply was lost: the session is there
// and holds this start's run id. Starting it again would run the job twice.
TEST(TmuxStart, ASessionCreatedDespiteTheErrorIsNotCreatedTwice) {
  ScriptedTmux runner;
  auto tmux = Make(runner);
  runner.Reply("new-session", 1, "", kExiting);
  runner.Reply("has-session", 0, "");
  runner.Reply("show-environment", 0, "GPUCTL_RUN_ID=r1\n");
  Status s = tmux->NewSession(Job("r1"));
  ASSERT_TRUE(s.ok()) << s.ToString();
  EXPECT_EQ(runner.Count("new-session"), 1);
  EXPECT_EQ(runner.calls.back(), (Argv{"tmux", "-f", "/dev/null", "-L", "sock", "show-environment", "-t",
                                       "=gpuctl-rw25", "GPUCTL_RUN_ID"}));
}

// has-session could not tell (the server was still exiting); the next try
// finds the name taken, by this start's own session.
TEST(TmuxStart, ADuplicateOnALaterTryThatIsThisStartsSessionIsSuccess) {
  ScriptedTmux runner;
  auto tmux = Make(runner);
  runner.Reply("new-session", 1, "", kExiting);
  runner.Reply("has-session", 1, "", kExiting);
  runner.Reply("new-session", 1, "", "duplicate session: gpuctl-rw25\n");
  runner.Reply("show-environment", 0, "GPUCTL_RUN_ID=r1\n");
  Status s = tmux->NewSession(Job("r1"));
  ASSERT_TRUE(s.ok()) << s.ToString();
  EXPECT_EQ(runner.Count("new-session"), 2);
}

TEST(TmuxStart, ASessionOfAnotherRunIsAlreadyExistsAndIsNotStartedOver) {
  {
    ScriptedTmux runner;
    auto tmux = Make(runner);
    runner.Reply("new-session", 1, "", kExiting);
    runner.Reply("has-session", 0, "");
    runner.Reply("show-environment", 0, "GPUCTL_RUN_ID=other\n");
    Status s = tmux->NewSession(Job("r1"));
    EXPECT_EQ(s.code(), ErrorCode::kAlreadyExists) << s.ToString();
    EXPECT_EQ(runner.Count("new-session"), 1);
  }
  {
    ScriptedTmux runner;
    auto tmux = Make(runner);
    runner.Reply("new-session", 1, "", kExiting);
    runner.Reply("has-session", 1, "", kNoServer);
    runner.Reply("new-session", 1, "", "duplicate session: gpuctl-rw25\n");
    runner.Reply("show-environment", 1, "", "unknown variable: GPUCTL_RUN_ID\n");
    Status s = tmux->NewSession(Job("r1"));
    EXPECT_EQ(s.code(), ErrorCode::kAlreadyExists) << s.ToString();
    EXPECT_EQ(runner.Count("new-session"), 2);
  }
}

TEST(TmuxStart, AServerThatKeepsExitingEndsAsUnavailableAfterTheLastTry) {
  ScriptedTmux runner;
  auto tmux = Make(runner, 3);
  for (int i = 0; i < 5; ++i) {
    runner.Reply("new-session", 1, "", kExiting);
    runner.Reply("has-session", 1, "", kNoServer);
  }
  Status s = tmux->NewSession(Job("r1"));
  EXPECT_EQ(s.code(), ErrorCode::kUnavailable) << s.ToString();
  EXPECT_EQ(runner.Count("new-session"), 3);
  EXPECT_NE(s.message().find("server exited unexpectedly"), std::string::npos) << s.message();
  EXPECT_NE(s.message().find("3 tries"), std::string::npos) << s.message();
}

TEST(TmuxStart, RetriesArePausedAndBounded) {
  ScriptedTmux runner;
  auto tmux = MakeTmux(runner, "sock", TmuxStartRetry{3, std::chrono::milliseconds(20)});
  for (int i = 0; i < 3; ++i) {
    runner.Reply("new-session", 1, "", kExiting);
    runner.Reply("has-session", 1, "", kNoServer);
  }
  const auto start = std::chrono::steady_clock::now();
  EXPECT_EQ(tmux->NewSession(Job("r1")).code(), ErrorCode::kUnavailable);
  const auto took = std::chrono::steady_clock::now() - start;
  EXPECT_GE(took, std::chrono::milliseconds(60)) << "pauses of 20 then 40 ms";
  EXPECT_LT(took, std::chrono::seconds(5));
}

}  // namespace
}  // namespace gpuctl::sys
