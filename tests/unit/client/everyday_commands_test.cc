// The commands people reach for first (issue 24): train wait against an
// in-process agent whose job goes through a pending relaunch and a restart,
// attach's argv, the subcommand lists, and the exit codes of errors found
// before any agent is asked.
#include <gtest/gtest.h>

#include <atomic>
#include <cstdio>
#include <fstream>
#include <mutex>
#include <sstream>
#include <thread>

#include <grpcpp/grpcpp.h>
#include <nlohmann/json.hpp>

#include "client/cli.h"
#include "client/commands/command_context.h"
#include "client/commands/train_subcommands.h"
#include "client/exit_codes.h"
#include "client/fleet/fleet.h"
#include "client/node/agent_config.h"
#include "client/node/node_store.h"
#include "client/ssh/host_key_policy.h"
#include "client/ssh/terminal_exec.h"
#include "gpuctl/v1/agent.grpc.pb.h"
#include "tests/fakes/temp_dir.h"
#include "tests/unit/client/cli_run.h"
#include "tests/unit/client/completion_run.h"
#include "tests/unit/client/in_process_agent.h"

namespace gpuctl::client {
namespace {

v1::Job WaitedJob(v1::JobState state) {
  v1::Job job;
  job.mutable_spec()->set_name("w");
  job.set_state(state);
  job.set_tmux_session("gpuctl-w");
  return job;
}

// GetJob answers the next of `answers` on each call, then the last forever.
class ScriptedJobAgent final : public v1::Agent::Service {
 public:
  explicit ScriptedJobAgent(std::vector<v1::Job> answers) : answers_(std::move(answers)) {}
  grpc::Status GetJob(grpc::ServerContext*, const v1::GetJobRequest* request, v1::Job* job) override {
    std::lock_guard lock(mutex_);
    if (request->name() != "w") return {grpc::StatusCode::NOT_FOUND, "no job named '" + request->name() + "'"};
    *job = answers_[std::min(calls_, answers_.size() - 1)];
    ++calls_;
    return grpc::Status::OK;
  }
  size_t calls() {
    std::lock_guard lock(mutex_);
    return calls_;
  }

 private:
  std::mutex mutex_;
  std::vector<v1::Job> answers_;
  size_t calls_ = 0;
};

using ScriptedAgentServer = InProcessAgentServer;


TEST(TrainWait, WaitsThroughAPendingRelaunchAndExitsWithTheJobsResult) {
  testing::TempDir dir;
  std::string address = "unix:" + dir.path() + "/agent.sock";
  v1::Job oomed = WaitedJob(v1::JOB_STATE_FAILED);
  oomed.set_relaunch_pending(true);  // attempt 1 OOMed; the agent relaunches it
  v1::Job done = WaitedJob(v1::JOB_STATE_SUCCEEDED);
  done.set_exit_code(0);
  ScriptedJobAgent agent({WaitedJob(v1::JOB_STATE_RUNNING), oomed, WaitedJob(v1::JOB_STATE_STARTING), done});
  ScriptedAgentServer server(address, agent);
  CliRun r = RunGpuctlAt(address, {"train", "wait", "w"});
  EXPECT_EQ(r.code, kExitOk) << r.err;
  EXPECT_EQ(agent.calls(), 4u);
  EXPECT_EQ(r.out, "job w: succeeded (exit 0)\n");
}

TEST(TrainWait, AFailedJobIsExit1AndJsonIsTheJob) {
  testing::TempDir dir;
  std::string address = "unix:" + dir.path() + "/agent.sock";
  v1::Job failed = WaitedJob(v1::JOB_STATE_FAILED);
  failed.set_exit_code(3);
  failed.set_state_reason("exited 3");
  ScriptedJobAgent agent({failed});
  ScriptedAgentServer server(address, agent);
  CliRun text = RunGpuctlAt(address, {"train", "wait", "w"});
  EXPECT_EQ(text.code, kExitFailure);
  EXPECT_EQ(text.out, "job w: failed (exit 3) (exited 3)\n");
  CliRun json = RunGpuctlAt(address, {"-o", "json", "train", "wait", "w"});
  EXPECT_EQ(json.code, kExitFailure);
  nlohmann::json job = nlohmann::json::parse(json.out);
  EXPECT_EQ(job["name"], "w");
  EXPECT_EQ(job["state"], "failed");
  EXPECT_EQ(RunGpuctlAt(address, {"train", "wait", "other"}).code, kExitFailure);  // no such job
}

TEST(TrainWait, TimeoutIs124WhileTheJobRuns) {
  testing::TempDir dir;
  std::string address = "unix:" + dir.path() + "/agent.sock";
  ScriptedJobAgent agent({WaitedJob(v1::JOB_STATE_RUNNING)});
  ScriptedAgentServer server(address, agent);
  CliRun r = RunGpuctlAt(address, {"train", "wait", "w", "--timeout", "300ms"});
  EXPECT_EQ(r.code, kExitTimedOut) << r.err;
  EXPECT_NE(r.err.find("has not ended after --timeout 300ms (running)"), std::string::npos) << r.err;
  EXPECT_EQ(RunGpuctlAt(address, {"train", "wait", "w", "--timeout", "soon"}).code, kExitUsage);
  EXPECT_EQ(RunGpuctlAt(address, {"train", "wait", "bad/name"}).code, kExitUsage);
}

TEST(TrainWait, AnAgentThatRestartsIsWaitedFor) {
  testing::TempDir dir;
  std::string address = "unix:" + dir.path() + "/agent.sock";
  ScriptedJobAgent before({WaitedJob(v1::JOB_STATE_RUNNING)});
  ScriptedJobAgent after({WaitedJob(v1::JOB_STATE_SUCCEEDED)});
  auto first = std::make_unique<ScriptedAgentServer>(address, before);
  std::unique_ptr<ScriptedAgentServer> second;
  std::atomic<bool> restarted{false};
  // The agent goes away once the wait has seen the job run, and comes back
  // (a new process on the same socket) a moment later.
  std::thread restart([&] {
    while (before.calls() == 0) std::this_thread::sleep_for(std::chrono::milliseconds(10));
    first->Stop();
    std::this_thread::sleep_for(std::chrono::milliseconds(1500));
    std::remove((dir.path() + "/agent.sock").c_str());
    second = std::make_unique<ScriptedAgentServer>(address, after);
    restarted = true;
  });
  CliRun r = RunGpuctlAt(address, {"train", "wait", "w"});
  restart.join();
  EXPECT_TRUE(restarted);
  EXPECT_EQ(r.code, kExitOk) << r.err;
  EXPECT_NE(r.err.find("lost the agent"), std::string::npos) << r.err;
  EXPECT_GE(after.calls(), 1u);
}

TEST(TrainWait, AnAgentNeverReachedIsExit3AtOnce) {
  CliRun r = RunGpuctl({"train", "wait", "w"});
  EXPECT_EQ(r.code, kExitUnreachable) << r.err;
  EXPECT_EQ(r.err.find("retrying"), std::string::npos) << r.err;
}

TEST(TrainAttachArgv, TheAgentsOwnTmuxServerHereOrThroughSshWithATerminal) {
  v1::Job job = WaitedJob(v1::JOB_STATE_RUNNING);
  job.set_tmux_socket("gpuctl-test-7");
  Result<std::vector<std::string>> local = TrainAttachArgv(job, nullptr, false);
  ASSERT_TRUE(local.ok()) << local.status().message();
  EXPECT_EQ(*local, (std::vector<std::string>{"tmux", "-L", "gpuctl-test-7", "attach-session", "-t", "=gpuctl-w"}));

  Node node;
  node.name = "n1";
  node.host = "10.0.0.5";
  node.user = "root";
  node.port = 2222;
  node.identity_file = "/k/id";
  Result<std::vector<std::string>> remote = TrainAttachArgv(job, &node, true);
  ASSERT_TRUE(remote.ok());
  EXPECT_EQ(*remote, (std::vector<std::string>{"ssh", "-t", "-p", "2222", "-i", "/k/id", "-o",
                                               "StrictHostKeyChecking=accept-new", "--", "root@10.0.0.5",
                                               "'tmux' '-L' 'gpuctl-test-7' 'attach-session' '-t' '=gpuctl-w'"}));

  // An older agent says no socket: the one it would have, by its install.
  job.clear_tmux_socket();
  EXPECT_EQ((*TrainAttachArgv(job, nullptr, false))[2], "gpuctl");
  node.agent_prefix = "/opt/g";
  EXPECT_NE(TrainAttachArgv(job, &node, false)->back().find("'" + TmuxSocketForPrefix("/opt/g") + "'"),
            std::string::npos);
}

TEST(TrainAttachArgv, AQueuedOrEndedJobHasNoSessionToAttachTo) {
  for (v1::JobState state : {v1::JOB_STATE_QUEUED, v1::JOB_STATE_SUCCEEDED, v1::JOB_STATE_FAILED}) {
    Result<std::vector<std::string>> argv = TrainAttachArgv(WaitedJob(state), nullptr, false);
    ASSERT_FALSE(argv.ok()) << state;
    EXPECT_EQ(argv.status().code(), ErrorCode::kFailedPrecondition);
    EXPECT_NE(argv.status().message().find("gpuctl train logs"), std::string::npos) << argv.status().message();
  }
}

TEST(SshTerminalArgv, AHostIsNeverAnOption) {
  ssh::SshTarget target{.user = "", .host = "-oProxyCommand=evil", .port = std::nullopt, .identity_file = ""};
  std::vector<std::string> argv = ssh::SshTerminalArgv(target, false, {"tmux", "it's"});
  EXPECT_EQ(argv, (std::vector<std::string>{"ssh", "-t", "--", "-oProxyCommand=evil", "'tmux' 'it'\\''s'"}));
}

TEST(BareCommands, PrintTheirSubcommandsOneLineEachAndExit2) {
  CliRun top = RunGpuctl({});
  EXPECT_EQ(top.code, kExitUsage);
  for (const char* line : {"\n  train ", "\n  health ", "\n  completion "}) {
    EXPECT_NE(top.err.find(line), std::string::npos) << line << " in " << top.err;
  }
  EXPECT_EQ(top.err.find("__complete"), std::string::npos) << top.err;
  CliRun train = RunGpuctl({"train"});
  EXPECT_EQ(train.code, kExitUsage);
  EXPECT_EQ(train.err.rfind("gpuctl train: a subcommand is required:\n", 0), 0u) << train.err;
  for (const char* sub : {"start", "status", "list", "wait", "attach", "stop", "logs", "rm", "dump"}) {
    EXPECT_NE(train.err.find("\n  " + std::string(sub) + " "), std::string::npos) << sub << " in " << train.err;
  }
}

TEST(LocalErrors, ATlsFileThatCannotBeReadIsExit5BeforeAnyAgentIsAsked) {
  testing::TempDir dir;
  std::ofstream(dir.path() + "/not.pem") << "hello\n";
  CliRun missing = RunGpuctl({"--agent", "127.0.0.1:1", "--tls-ca", dir.path() + "/none.pem", "--tls-cert",
                              dir.path() + "/none.pem", "--tls-key", dir.path() + "/none.pem", "health"});
  EXPECT_EQ(missing.code, kExitLocalConfig) << missing.err;
  EXPECT_NE(missing.err.find("--tls-ca"), std::string::npos) << missing.err;
  CliRun not_pem = RunGpuctl({"--agent", "127.0.0.1:1", "--tls-ca", dir.path() + "/not.pem", "--tls-cert",
                              dir.path() + "/not.pem", "--tls-key", dir.path() + "/not.pem", "train", "list"});
  EXPECT_EQ(not_pem.code, kExitLocalConfig) << not_pem.err;
  // Flags left out are still a usage error (2), as before.
  EXPECT_EQ(RunGpuctl({"--agent", "127.0.0.1:1", "health"}).code, kExitUsage);
}

TEST(LocalErrors, AHostKeyRefusalHasItsOwnCode) {
  EXPECT_EQ(ExitCodeFor(Status(ErrorCode::kPermissionDenied,
                               "the host key of [h]:22 is not known (ED25519 SHA256:x is not in /k); check")),
            kExitHostKeyUntrusted);
  EXPECT_EQ(ExitCodeFor(Status(ErrorCode::kPermissionDenied, "REMOTE HOST KEY CHANGED for h: ...").Wrap("node n1")),
            kExitHostKeyUntrusted);
  // Authentication refused is not a host key.
  EXPECT_EQ(ExitCodeFor(Status(ErrorCode::kPermissionDenied, "authentication failed for root@h")), kExitFailure);
}

TEST(HealthCount, WithoutWatchIsAWatchOfThatManyNotOneSnapshot) {
  // No agent: what matters is that --count alone is accepted as a watch
  // (the help says so), not refused and not ignored.
  CliRun r = RunGpuctl({"health", "--count", "3"});
  EXPECT_EQ(r.code, kExitUnreachable) << r.err;
  EXPECT_NE(RunGpuctl({"health", "--help"}).out.find("implies --watch"), std::string::npos);
}

TEST(FleetJson, RowsOfReachedNodesSayReached) {
  std::ostringstream out;
  std::ostringstream err;
  Console console{out, err, false};
  CommandContext context{.global = {}, .console = console, .env_agent = "", .args = {}};
  Node a;
  a.name = "a";
  Node b;
  b.name = "b";
  std::vector<NodeAnswer> status = {{Status::Ok(), true}, {Unavailable("down"), false}};
  PrintFleetJsonLines(context, {a, b}, status, [](size_t) { return nlohmann::json{{"x", 1}}; });
  std::istringstream lines(out.str());
  std::string line;
  std::getline(lines, line);
  EXPECT_EQ(nlohmann::json::parse(line)["reached"], true) << line;
  std::getline(lines, line);
  EXPECT_EQ(nlohmann::json::parse(line)["reached"], false) << line;
}


TEST(Completion, OffersOutputFormatsStatesAndTheNewCommands) {
  CliRun r = RunGpuctl({"completion", "bash"});
  ASSERT_EQ(r.code, kExitOk);
  EXPECT_EQ(RunBashCompletion(r.out, "gpuctl -o ''", 2), "text json\n");
  EXPECT_EQ(RunBashCompletion(r.out, "gpuctl train list --output j", 4), "json\n");
  EXPECT_EQ(RunBashCompletion(r.out, "gpuctl train list --state ru", 4), "running\n");
  EXPECT_EQ(RunBashCompletion(r.out, "gpuctl train w", 2), "wait\n");
  EXPECT_EQ(RunBashCompletion(r.out, "gpuctl train rm --e", 3), "--ended\n");
  EXPECT_EQ(RunBashCompletion(r.out, "gpuctl events --k", 2), "--kind\n");
  EXPECT_EQ(r.out.find("__complete\""), std::string::npos);  // hidden: not offered as a command
  // No agent answers (a gpuctl that is not there): nothing, and no hang.
  EXPECT_EQ(RunBashCompletion(r.out, "/nonexistent/gpuctl train logs ''", 3), "\n");
}

}  // namespace
}  // namespace gpuctl::client
