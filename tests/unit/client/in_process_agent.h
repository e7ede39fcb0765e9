// A gRPC server in the test process that serves a test's own Agent service
// on a unix socket, and gpuctl run against it: for the client tests that
// script what the agent answers (train_command_test.cc,
// everyday_commands_test.cc).
#pragma once

#include <chrono>
#include <memory>
#include <sstream>
#include <string>
#include <vector>

#include <grpcpp/grpcpp.h>

#include "client/cli.h"
#include "tests/unit/client/cli_run.h"

namespace gpuctl::client {

class InProcessAgentServer {
 public:
  InProcessAgentServer(const std::string& address, grpc::Service& service) {
    grpc::ServerBuilder builder;
    builder.AddListeningPort(address, grpc::InsecureServerCredentials());
    builder.RegisterService(&service);
    server_ = builder.BuildAndStart();
  }
  ~InProcessAgentServer() { Stop(); }
  InProcessAgentServer(const InProcessAgentServer&) = delete;
  InProcessAgentServer& operator=(const InProcessAgentServer&) = delete;
  bool started() const { return server_ != nullptr; }
  // Ends every call in flight (as an agent shutting down does).
  void Stop() {
    if (!server_) return;
    server_->Shutdown(std::chrono::system_clock::now() + std::chrono::milliseconds(100));
    server_->Wait();
    server_.reset();
  }

 private:
  std::unique_ptr<grpc::Server> server_;
};

// RunCli with --agent ADDRESS and captured streams.
inline CliRun RunGpuctlAt(const std::string& address, std::vector<std::string> args) {
  args.insert(args.begin(), {"--agent", address});
  std::ostringstream out;
  std::ostringstream err;
  Console console{out, err, false};
  CliRun run;
  run.code = RunCli(args, console, "");
  run.out = out.str();
  run.err = err.str();
  return run;
}

}  // namespace gpuctl::client
