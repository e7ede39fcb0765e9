// Owns the gRPC server: prepares the listen sockets (private directory,
// 0600 socket, one instance per socket), registers the services (Agent,
// grpc.health.v1, reflection) and shuts it all down with a deadline.
#pragma once

#include <chrono>
#include <memory>
#include <string>
#include <vector>

#include <grpcpp/grpcpp.h>
#include <grpcpp/health_check_service_interface.h>

#include "agents/sys/pid_lock.h"
#include "common/status.h"
#include "daemon/config/daemon_config.h"

namespace gpuctl::daemon {

class AgentServer {
 public:
  // Binds every listen address and starts serving `services`. Errors name the
  // address and what to do (another instance, bad permissions, port in use).
  static Result<std::unique_ptr<AgentServer>> Start(const DaemonConfig& config,
                                                    const std::vector<grpc::Service*>& services);
  ~AgentServer();

  // Addresses actually bound (TCP port 0 resolved to the real port).
  const std::vector<std::string>& bound() const { return bound_; }
  // Cancels what is still running at `deadline`, then returns. Idempotent.
  void Shutdown(std::chrono::system_clock::time_point deadline);

 private:
  AgentServer() = default;
  std::unique_ptr<grpc::Server> server_;
  std::vector<sys::PidLock> locks_;
  std::vector<std::string> socket_paths_;
  std::vector<std::string> bound_;
  bool shut_down_ = false;
};

}  // namespace gpuctl::daemon
