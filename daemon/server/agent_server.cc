#include "daemon/server/agent_server.h"

#include <grpc/grpc.h>
#include <grpcpp/ext/proto_server_reflection_plugin.h>
#include <grpcpp/security/server_credentials.h>
#include <spdlog/spdlog.h>

#include "agents/sys/files.h"
#include "agents/sys/paths.h"
#include "agents/sys/resolve.h"

namespace gpuctl::daemon {
namespace {

// Creates the socket's directory (0700 when we create it), checks that no
// other user can change what is in it, and takes the instance lock beside
// the socket. gRPC unlinks an existing socket file when binding, so without
// this lock a second agent would silently steal it.
Result<sys::PidLock> PrepareUnixSocket(const ListenAddress& addr) {
  std::string dir = sys::ParentDir(addr.path);
  if (Status s = sys::EnsureDir(dir, 0700); !s.ok()) {
    return s.Wrap("cannot prepare the socket directory for unix:" + addr.path);
  }
  if (Status s = sys::CheckPrivateDir(dir); !s.ok()) {
    return Status(s.code(), "will not serve unix:" + addr.path + ": " + s.message());
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

// Mutual TLS for TCP: the agent's certificate, and clients must present one
// signed by the client CA (Validate made sure all three are given).
Result<std::shared_ptr<grpc::ServerCredentials>> TlsCredentials(const DaemonConfig& config) {
  grpc::SslServerCredentialsOptions options(GRPC_SSL_REQUEST_AND_REQUIRE_CLIENT_CERTIFICATE_AND_VERIFY);
  Result<std::string> cert = sys::ReadWholeFile(config.tls_cert);
  if (!cert.ok()) return cert.status().Wrap("--tls-cert");
  Result<std::string> key = sys::ReadWholeFile(config.tls_key);
  if (!key.ok()) return key.status().Wrap("--tls-key");
  Result<std::string> ca = sys::ReadWholeFile(config.tls_client_ca);
  if (!ca.ok()) return ca.status().Wrap("--tls-client-ca");
  for (const auto& [flag, pem] : {std::pair{"--tls-cert", &*cert}, std::pair{"--tls-key", &*key},
                                  std::pair{"--tls-client-ca", &*ca}}) {
    if (pem->find("-----BEGIN ") == std::string::npos) {
      return InvalidArgument(std::string(flag) + ": not a PEM file");
    }
  }
  options.pem_root_certs = *ca;
  options.pem_key_cert_pairs.push_back({*key, *cert});
  return grpc::SslServerCredentials(options);
}

// TCP addresses as the literal addresses their host resolves to: what is
// bound is decided by address, never by a name.
Result<std::vector<ListenAddress>> ResolveListenAddress(const ListenAddress& addr) {
  if (addr.kind == ListenAddress::Kind::kUnix) return std::vector<ListenAddress>{addr};
  Result<std::vector<std::string>> literals = sys::ResolveToLiterals(addr.host);
  if (!literals.ok()) return literals.status().Wrap("--listen " + addr.GrpcUri());
  std::vector<ListenAddress> out;
  for (const std::string& literal : *literals) {
    ListenAddress resolved = addr;
    resolved.host = literal;
    if (literal != addr.host) spdlog::info("--listen {} resolves to {}", addr.GrpcUri(), resolved.GrpcUri());
    out.push_back(resolved);
  }
  return out;
}

}  // namespace

Result<std::unique_ptr<AgentServer>> AgentServer::Start(const DaemonConfig& config,
                                                        const std::vector<grpc::Service*>& services) {
  std::unique_ptr<AgentServer> server(new AgentServer());
  // gRPC's library stays initialised until the process exits. When its last
  // reference goes (in ~Server, after a clean stop), grpc_shutdown joins its
  // executor threads, and one still polling for a connection in flight held
  // a stopped agent's exit for over 8 s (210 followers reconnecting at once:
  // tests/integration/stream_teardown_test.cc). Everything is saved by then;
  // the kernel frees the rest at exit.
  [[maybe_unused]] static const bool library_kept = (grpc_init(), true);
  grpc::EnableDefaultHealthCheckService(true);
  grpc::reflection::InitProtoReflectionServerBuilderPlugin();
  grpc::ServerBuilder builder;
  // gRPC sets SO_REUSEPORT by default, which would let a second agent bind
  // the same TCP port and split the traffic. One owner per port.
  builder.AddChannelArgument(GRPC_ARG_ALLOW_REUSEPORT, 0);

  std::shared_ptr<grpc::ServerCredentials> tls;
  if (config.tls()) {
    Result<std::shared_ptr<grpc::ServerCredentials>> made = TlsCredentials(config);
    if (!made.ok()) return made.status();
    tls = *made;
  }
  std::vector<std::pair<ListenAddress, std::unique_ptr<int>>> ports;
  for (const std::string& text : config.listen) {
    Result<ListenAddress> parsed = ParseListenAddress(text);
    if (!parsed.ok()) return parsed.status();
    Result<std::vector<ListenAddress>> resolved = ResolveListenAddress(*parsed);
    if (!resolved.ok()) return resolved.status();
    for (const ListenAddress& addr : *resolved) {
      std::shared_ptr<grpc::ServerCredentials> credentials = grpc::InsecureServerCredentials();
      if (addr.kind == ListenAddress::Kind::kUnix) {
        Result<sys::PidLock> lock = PrepareUnixSocket(addr);
        if (!lock.ok()) return lock.status();
        server->locks_.push_back(std::move(lock).value());
      } else {
        if (!tls) return InvalidArgument("--listen " + text + ": TCP needs mutual TLS (--tls-cert, --tls-key, --tls-client-ca)");
        credentials = tls;
      }
      auto selected = std::make_unique<int>(0);
      builder.AddListeningPort(addr.GrpcUri(), credentials, selected.get());
      ports.emplace_back(addr, std::move(selected));
    }
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
