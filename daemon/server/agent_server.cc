#include "daemon/server/agent_server.h"

#include <filesystem>

#include <grpcpp/ext/proto_server_reflection_plugin.h>
#include <spdlog/spdlog.h>

#include "agents/sys/files.h"

namespace gpuctl::daemon {
namespace {

// Creates the socket's directory (0700 when we create it) and takes the
// instance lock beside the socket. gRPC unlinks an existing socket file when
// binding, so without this lock a second agent would silently steal it.
Result<sys::PidLock> PrepareUnixSocket(const ListenAddress& addr) {
  std::string dir = std::filesystem::path(addr.path).parent_path().string();
  if (Status s = sys::EnsureDir(dir, 0700); !s.ok()) {
    return s.Wrap("cannot prepare the socket directory for unix:" + addr.path);
  }
  Result<sys::PidLock> lock = sys::PidLock::Acquire(addr.path + ".lock");
  if (!lock.ok()) {
    if (lock.status().code() == ErrorCode::kAlreadyExists) {
      return Status(ErrorCode::kAlreadyExists,
                    "another gpuctld is already serving unix:" + addr.path + " (" + lock.status().message() +
                        "); stop it first (systemctl stop gpuctld) or choose another --listen unix:PATH");
    }
    return lock.status();
  }
  return lock;
}

}  // namespace

Result<std::unique_ptr<AgentServer>> AgentServer::Start(const DaemonConfig& config,
                                                        const std::vector<grpc::Service*>& services) {
  std::unique_ptr<AgentServer> server(new AgentServer());
  grpc::EnableDefaultHealthCheckService(true);
  grpc::reflection::InitProtoReflectionServerBuilderPlugin();
  grpc::ServerBuilder builder;
  // gRPC sets SO_REUSEPORT by default, which would let a second agent bind
  // the same TCP port and split the traffic. One owner per port.
  builder.AddChannelArgument(GRPC_ARG_ALLOW_REUSEPORT, 0);

  std::vector<std::pair<ListenAddress, std::unique_ptr<int>>> ports;
  for (const std::string& text : config.listen) {
    Result<ListenAddress> addr = ParseListenAddress(text);
    if (!addr.ok()) return addr.status();
    if (addr->kind == ListenAddress::Kind::kUnix) {
      Result<sys::PidLock> lock = PrepareUnixSocket(*addr);
      if (!lock.ok()) return lock.status();
      server->locks_.push_back(std::move(lock).value());
    }
    auto selected = std::make_unique<int>(0);
    builder.AddListeningPort(addr->GrpcUri(), grpc::InsecureServerCredentials(), selected.get());
    ports.emplace_back(*addr, std::move(selected));
  }
  for (grpc::Service* service : services) builder.RegisterService(service);

  // umask 0177 while binding: unix sockets are born 0600, never wider.
  server->server_ = sys::WithUmask(0177, [&] { return builder.BuildAndStart(); });
  if (!server->server_) {
    std::string list;
    for (const auto& [addr, port] : ports) list += (list.empty() ? "" : ", ") + addr.GrpcUri();
    return Unavailable("cannot listen on " + list +
                       ": the address may be in use or not permitted (see the gRPC error above)");
  }
  for (const auto& [addr, port] : ports) {
    if (*port == 0) {
      server->server_->Shutdown();
      return Unavailable("cannot listen on " + addr.GrpcUri() + ": the address is in use or not permitted");
    }
    ListenAddress bound = addr;
    if (bound.kind == ListenAddress::Kind::kTcp) bound.port = *port;
    if (bound.kind == ListenAddress::Kind::kUnix) {
      server->socket_paths_.push_back(bound.path);
      if (Status s = sys::ChangeMode(bound.path, 0600); !s.ok()) spdlog::warn("{}", s.message());
    }
    server->bound_.push_back(bound.GrpcUri());
  }
  return server;
}

void AgentServer::Shutdown(std::chrono::system_clock::time_point deadline) {
  if (shut_down_) return;
  shut_down_ = true;
  server_->Shutdown(deadline);
  server_->Wait();
  for (const std::string& path : socket_paths_) {
    if (Status s = sys::RemoveFile(path); !s.ok()) spdlog::warn("{}", s.message());
  }
}

AgentServer::~AgentServer() {
  if (server_) Shutdown(std::chrono::system_clock::time_point{});  // a past deadline: cancel at once
}

}  // namespace gpuctl::daemon
