// train wait of a job that a `train rm` (or `rm --ended`) takes away while
// it is waited for: said as such, exit 1, not "no job named" as if NAME
// were a typo. And a call an agent cancels as it shuts down (a restart):
// unreachable (exit 3, waited through by train wait), not exit 1.
#include <gtest/gtest.h>

#include <memory>
#include <mutex>
#include <sstream>
#include <string>
#include <vector>

#include <grpcpp/grpcpp.h>

#include "client/cli.h"
#include "client/exit_codes.h"
#include "gpuctl/v1/agent.grpc.pb.h"
#include "tests/fakes/temp_dir.h"
#include "tests/unit/client/cli_run.h"

namespace gpuctl::client {
namespace {

// GetJob of "gone" answers a running job `running_answers` times, then
// NOT_FOUND as the agent does once the record is removed.
class RemovedWhileWaitedAgent final : public v1::Agent::Service {
 public:
  explicit RemovedWhileWaitedAgent(size_t running_answers) : running_answers_(running_answers) {}
  grpc::Status GetJob(grpc::ServerContext*, const v1::GetJobRequest* request, v1::Job* job) override {
    std::lock_guard lock(mutex_);
    if (request->name() != "gone" || calls_++ >= running_answers_) {
      return {grpc::StatusCode::NOT_FOUND, "no job named '" + request->name() + "'"};
    }
    job->mutable_spec()->set_name("gone");
    job->set_state(v1::JOB_STATE_RUNNING);
    return grpc::Status::OK;
  }

 private:
  std::mutex mutex_;
  size_t running_answers_;
  size_t calls_ = 0;
};

// GetJob of "w": running, then CANCELLED `cancelled_answers` times (the
// agent shutting down), then succeeded.
class CancelledWhileWaitedAgent final : public v1::Agent::Service {
 public:
  explicit CancelledWhileWaitedAgent(size_t cancelled_answers) : cancelled_answers_(cancelled_answers) {}
  grpc::Status GetJob(grpc::ServerContext*, const v1::GetJobRequest*, v1::Job* job) override {
    std::lock_guard lock(mutex_);
    const size_t call = calls_++;
    if (call >= 1 && call <= cancelled_answers_) return {grpc::StatusCode::CANCELLED, "CANCELLED"};
    job->mutable_spec()->set_name("w");
    job->set_state(call == 0 ? v1::JOB_STATE_RUNNING : v1::JOB_STATE_SUCCEEDED);
    if (call > 0) job->set_exit_code(0);
    return grpc::Status::OK;
  }

 private:
  std::mutex mutex_;
  size_t cancelled_answers_;
  size_t calls_ = 0;
};

CliRun RunAgainst(grpc::Service& service, const std::vector<std::string>& command) {
  testing::TempDir dir;
  const std::string address = "unix:" + dir.path() + "/agent.sock";
  grpc::ServerBuilder builder;
  builder.AddListeningPort(address, grpc::InsecureServerCredentials());
  builder.RegisterService(&service);
  std::unique_ptr<grpc::Server> server = builder.BuildAndStart();
  std::ostringstream out;
  std::ostringstream err;
  Console console{out, err, false};
  CliRun run;
  std::vector<std::string> args = {"--agent", address};
  args.insert(args.end(), command.begin(), command.end());
  run.code = RunCli(args, console, "");
  run.out = out.str();
  run.err = err.str();
  server->Shutdown(std::chrono::system_clock::now() + std::chrono::milliseconds(100));
  server->Wait();
  return run;
}

TEST(TrainWaitRemoved, AJobRemovedWhileWaitedForIsSaidSoNotCalledUnknown) {
  RemovedWhileWaitedAgent agent(2);
  CliRun run = RunAgainst(agent, {"train", "wait", "gone"});
  EXPECT_EQ(run.code, kExitFailure) << run.err;
  EXPECT_EQ(run.out, "");
  EXPECT_NE(run.err.find("job gone was removed (train rm) while waiting for it"), std::string::npos) << run.err;
  EXPECT_EQ(run.err.find("no job named"), std::string::npos) << run.err;
}

TEST(TrainWaitRemoved, ANameNeverSeenIsStillNoJobNamed) {
  RemovedWhileWaitedAgent agent(0);
  CliRun run = RunAgainst(agent, {"train", "wait", "gone"});
  EXPECT_EQ(run.code, kExitFailure) << run.err;
  EXPECT_NE(run.err.find("no job named 'gone'"), std::string::npos) << run.err;
}

TEST(AgentCancelledCall, IsUnreachableAndWaitedThroughNotAnAgentError) {
  CancelledWhileWaitedAgent waited(2);
  CliRun wait = RunAgainst(waited, {"train", "wait", "w"});
  EXPECT_EQ(wait.code, kExitOk) << wait.err;
  EXPECT_NE(wait.err.find("lost the agent"), std::string::npos) << wait.err;
  EXPECT_EQ(wait.out, "job w: succeeded (exit 0)\n");

  CancelledWhileWaitedAgent shutting_down(1000);
  CliRun status = RunAgainst(shutting_down, {"train", "status", "w"});  // its first answer is the running job
  EXPECT_EQ(status.code, kExitOk) << status.err;
  CliRun again = RunAgainst(shutting_down, {"train", "status", "w"});
  EXPECT_EQ(again.code, kExitUnreachable) << again.err;
}

}  // namespace
}  // namespace gpuctl::client
