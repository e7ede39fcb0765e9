// One SSH connection (libssh) to a node: host key checked against
// known_hosts, authenticated by ssh-agent or key files (never a password),
// then used for commands, uploads and forwarded unix sockets.
//
// Not thread-safe: libssh sessions are not, so exactly one thread uses a
// session at a time (the SocketTunnel takes it over while it runs).
#pragma once

#include <memory>
#include <string>
#include <string_view>

#include "client/ssh/ssh_target.h"
#include "common/status.h"

struct ssh_session_struct;
struct ssh_channel_struct;

namespace gpuctl::client::ssh {

struct ExecResult {
  int exit_status = -1;  // -1 when the remote command died of a signal or gave none
  std::string out;
  std::string err;
};

class SshSession {
 public:
  // Connects, checks the host key (see SshOptions::accept_new_host_key) and
  // authenticates. Errors: kUnavailable (cannot reach or speak SSH to the
  // host), kPermissionDenied (host key unknown or changed, authentication
  // refused), kIo (known_hosts unreadable or unwritable).
  static Result<std::unique_ptr<SshSession>> Connect(const SshTarget& target, const SshOptions& options);
  ~SshSession();
  SshSession(const SshSession&) = delete;
  SshSession& operator=(const SshSession&) = delete;

  // "user@host:port" as connected.
  const std::string& description() const { return description_; }

  // Runs `command` through the remote user's shell with `stdin_data` on its
  // stdin. A non-zero exit is a result, not an error; errors are transport
  // failures (kUnavailable).
  Result<ExecResult> Exec(const std::string& command, std::string_view stdin_data = {});

  // SFTP upload to `remote_path` (absolute; its directory must exist) with
  // `mode`. Written to a temporary name beside it and renamed into place,
  // so a broken upload never replaces a good file and a running binary
  // keeps its old inode. Errors: kIo naming the remote path.
  Status UploadBytes(std::string_view content, const std::string& remote_path, unsigned mode);
  Status UploadFile(const std::string& local_path, const std::string& remote_path, unsigned mode);

  // A channel to the remote unix socket (direct-streamlocal@openssh.com,
  // what `ssh -L local.sock:remote.sock` uses). Where the server will not
  // (or libssh will not ask it: libssh 0.10 takes OpenSSH 10 for another
  // server) and `bridge_command` is given, that command is run on the node
  // instead, over an exec channel: `gpuctld --bridge SOCKET`, which says
  // "ready" on stderr once connected. The caller frees the channel with
  // CloseChannel. Errors: kUnavailable naming the socket (missing socket,
  // agent not running, forwarding forbidden and no bridge).
  Result<ssh_channel_struct*> OpenUnixForward(const std::string& remote_socket,
                                              const std::string& bridge_command = "");
  static void CloseChannel(ssh_channel_struct* channel);

  // The raw libssh handle for the tunnel's poll loop.
  ssh_session_struct* raw() const { return session_; }

 private:
  Result<ssh_channel_struct*> OpenBridge(const std::string& remote_socket, const std::string& command,
                                         const std::string& forward_error);

  SshSession(ssh_session_struct* session, std::string description);
  Status RenameOver(const std::string& from, const std::string& to);

  ssh_session_struct* session_;
  std::string description_;
};

}  // namespace gpuctl::client::ssh
