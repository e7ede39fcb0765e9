// train list --watch runs "until interrupted": an agent that restarts under
// it (its calls cancelled, then refused) is waited for, as top does, not the
// end of the watch.
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

namespace gpuctl::client {
namespace {

// ListJobs: job alpha, then CANCELLED and UNAVAILABLE (the agent going
// down), then job beta.
class RestartingListAgent final : public v1::Agent::Service {
 public:
  grpc::Status ListJobs(grpc::ServerContext*, const v1::ListJobsRequest*, v1::ListJobsResponse* out) override {
    std::lock_guard lock(mutex_);
    const size_t call = calls_++;
    if (call == 1) return {grpc::StatusCode::CANCELLED, "CANCELLED"};
    if (call == 2) return {grpc::StatusCode::UNAVAILABLE, "connection refused"};
    v1::Job* job = out->add_jobs();
    job->mutable_spec()->set_name(call == 0 ? "alpha" : "beta");
    job->set_state(v1::JOB_STATE_RUNNING);
    return grpc::Status::OK;
  }

 private:
  std::mutex mutex_;
  size_t calls_ = 0;
};

// Keeps what is written until a listing of beta was: the write after it
// fails, as a closed pipe does, which ends the watch.
class UntilBetaBuf final : public std::stringbuf {
 protected:
  std::streamsize xsputn(const char* data, std::streamsize n) override {
    if (str().find("beta") != std::string::npos) return 0;
    return std::stringbuf::xsputn(data, n);
  }
  int_type overflow(int_type c) override {
    if (str().find("beta") != std::string::npos) return traits_type::eof();
    return std::stringbuf::overflow(c);
  }
};

TEST(TrainListWatch, AnAgentRestartingUnderTheWatchIsWaitedFor) {
  testing::TempDir dir;
  const std::string address = "unix:" + dir.path() + "/agent.sock";
  RestartingListAgent service;
  grpc::ServerBuilder builder;
  builder.AddListeningPort(address, grpc::InsecureServerCredentials());
  builder.RegisterService(&service);
  std::unique_ptr<grpc::Server> server = builder.BuildAndStart();

  UntilBetaBuf out_buf;
  std::ostream out(&out_buf);
  std::ostringstream err;
  Console console{out, err, false};
  const int code =
      RunCli({"--agent", address, "train", "list", "--watch", "--interval", "200ms"}, console, "");
  server->Shutdown(std::chrono::system_clock::now() + std::chrono::milliseconds(100));
  server->Wait();

  EXPECT_EQ(code, kExitOk) << err.str();
  const std::string shown = out_buf.str();
  EXPECT_NE(shown.find("alpha"), std::string::npos) << shown;
  EXPECT_NE(shown.find("beta"), std::string::npos) << shown;
  const std::string said = err.str();
  EXPECT_NE(said.find("lost the agent"), std::string::npos) << said;
  EXPECT_EQ(said.find("lost the agent"), said.rfind("lost the agent")) << "said once: " << said;
  EXPECT_NE(said.find("reached the agent again"), std::string::npos) << said;
}

}  // namespace
}  // namespace gpuctl::client
