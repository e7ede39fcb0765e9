// A local unix socket whose connections are forwarded over an SSH session to
// a unix socket on the remote host: gRPC needs an address to dial, and the
// agent listens on nothing public.
//
// One thread pumps every connection (libssh sessions are not thread-safe):
// it polls the listening socket, each local connection and the SSH socket,
// and moves bytes both ways. The socket lives in a private 0700 directory,
// so only this user can use the tunnel.
#pragma once

#include <memory>
#include <string>
#include <thread>

#include "agents/sys/unique_fd.h"
#include "common/status.h"

struct ssh_channel_struct;

namespace gpuctl::client::ssh {

class SshSession;

class SocketTunnel {
 public:
  // Opens one channel to `remote_socket` first, so an agent that is not
  // there is a clear error now rather than a vague gRPC one later. From here
  // until the tunnel is destroyed, the tunnel's thread alone uses `session`.
  // `bridge_command`: see SshSession::OpenUnixForward.
  // Errors: kUnavailable (remote socket unreachable), kIo (local socket).
  static Result<std::unique_ptr<SocketTunnel>> Start(std::shared_ptr<SshSession> session,
                                                     const std::string& remote_socket,
                                                     const std::string& bridge_command = "");
  // Stops the thread, closes every forwarded connection and removes the
  // local socket and its directory. The session is free to use again after.
  ~SocketTunnel();
  SocketTunnel(const SocketTunnel&) = delete;
  SocketTunnel& operator=(const SocketTunnel&) = delete;

  // "unix:/tmp/gpuctl-tunnel-XXXXXX/agent.sock": what gRPC dials.
  std::string address() const { return "unix:" + local_socket_; }

 private:
  SocketTunnel(std::shared_ptr<SshSession> session, std::string remote_socket, std::string bridge_command,
               std::string dir,
               sys::UniqueFd listener, sys::UniqueFd wake_read, sys::UniqueFd wake_write, ssh_channel_struct* spare);
  void Run();

  std::shared_ptr<SshSession> session_;
  std::string remote_socket_;
  std::string bridge_command_;
  std::string dir_;
  std::string local_socket_;
  sys::UniqueFd listener_;
  sys::UniqueFd wake_read_;
  sys::UniqueFd wake_write_;
  ssh_channel_struct* spare_;  // the channel opened by Start, given to the first connection
  std::thread thread_;
};

}  // namespace gpuctl::client::ssh
