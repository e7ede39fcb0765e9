#include "client/ssh/ssh_session.h"

#include <poll.h>

#include <chrono>
#include <cstdlib>
#include <filesystem>

#include <libssh/libssh.h>

#include "client/ssh/host_key_policy.h"
#include "client/ssh/ssh_auth.h"

namespace gpuctl::client::ssh {
namespace {

std::string DefaultSshDir() {
  const char* home = std::getenv("HOME");
  return std::string(home ? home : "") + "/.ssh";
}

// Frees a session that never made it into an SshSession.
struct SessionGuard {
  ssh_session session;
  ~SessionGuard() {
    if (session) {
      ssh_disconnect(session);
      ssh_free(session);
    }
  }
};

Status SetOption(ssh_session session, ssh_options_e option, const void* value, const std::string& what) {
  if (ssh_options_set(session, option, value) == SSH_OK) return Status::Ok();
  return InvalidArgument("bad SSH " + what + ": " + ssh_get_error(session));
}

// Host, then the config files (the user's, then the system's; the first value
// found wins, as in OpenSSH), then what the caller gave explicitly.
Status ApplyOptions(ssh_session session, const SshTarget& target, const SshOptions& options,
                    std::string& known_hosts) {
  std::string ssh_dir = options.ssh_dir.empty() ? DefaultSshDir() : options.ssh_dir;
  known_hosts = options.known_hosts_file.empty() ? ssh_dir + "/known_hosts" : options.known_hosts_file;
  std::string config = options.config_file.empty() ? ssh_dir + "/config" : options.config_file;
  if (Status s = SetOption(session, SSH_OPTIONS_HOST, target.host.c_str(), "host"); !s.ok()) return s;
  if (Status s = SetOption(session, SSH_OPTIONS_SSH_DIR, ssh_dir.c_str(), "directory"); !s.ok()) return s;
  if (Status s = SetOption(session, SSH_OPTIONS_KNOWNHOSTS, known_hosts.c_str(), "known_hosts"); !s.ok()) return s;
  if (!options.global_known_hosts_file.empty()) {
    const char* global = options.global_known_hosts_file.c_str();
    if (Status s = SetOption(session, SSH_OPTIONS_GLOBAL_KNOWNHOSTS, global, "global known_hosts"); !s.ok()) return s;
  }
  if (ssh_options_parse_config(session, config.c_str()) != SSH_OK) {
    return InvalidArgument("cannot use the SSH config " + config + ": " + ssh_get_error(session));
  }
  if (std::filesystem::exists("/etc/ssh/ssh_config") &&
      ssh_options_parse_config(session, "/etc/ssh/ssh_config") != SSH_OK) {
    return InvalidArgument(std::string("cannot use the SSH config /etc/ssh/ssh_config: ") + ssh_get_error(session));
  }
  if (!target.user.empty()) {
    if (Status s = SetOption(session, SSH_OPTIONS_USER, target.user.c_str(), "user"); !s.ok()) return s;
  }
  if (target.port) {
    unsigned port = static_cast<unsigned>(*target.port);
    if (Status s = SetOption(session, SSH_OPTIONS_PORT, &port, "port"); !s.ok()) return s;
  }
  // Small request/response exchanges (SFTP writes, gRPC through the tunnel)
  // would otherwise wait on Nagle and delayed ACKs, 40 ms a round trip.
  int nodelay = 1;
  if (Status s = SetOption(session, SSH_OPTIONS_NODELAY, &nodelay, "nodelay"); !s.ok()) return s;
  long timeout = static_cast<long>(options.connect_timeout.count());
  return SetOption(session, SSH_OPTIONS_TIMEOUT, &timeout, "timeout");
}

std::string ConnectedDescription(ssh_session session, int& port) {
  char* user = nullptr;
  char* host = nullptr;
  ssh_options_get(session, SSH_OPTIONS_USER, &user);
  ssh_options_get(session, SSH_OPTIONS_HOST, &host);
  unsigned int p = 22;
  ssh_options_get_port(session, &p);
  port = static_cast<int>(p);
  std::string out = std::string(user ? user : "?") + "@" + (host ? host : "?") + ":" + std::to_string(p);
  ssh_string_free_char(user);
  ssh_string_free_char(host);
  return out;
}

}  // namespace

std::string DescribeTarget(const SshTarget& target) {
  std::string out = target.user.empty() ? "" : target.user + "@";
  out += target.host;
  if (target.port) out += ":" + std::to_string(*target.port);
  return out;
}

Result<std::unique_ptr<SshSession>> SshSession::Connect(const SshTarget& target, const SshOptions& options) {
  SessionGuard guard{ssh_new()};
  if (!guard.session) return Internal("libssh could not allocate a session");
  std::string known_hosts;
  if (Status s = ApplyOptions(guard.session, target, options, known_hosts); !s.ok()) return s;
  if (ssh_connect(guard.session) != SSH_OK) {
    return Unavailable("cannot reach " + DescribeTarget(target) + " over SSH: " + ssh_get_error(guard.session));
  }
  int port = 22;
  std::string description = ConnectedDescription(guard.session, port);
  char* host = nullptr;
  ssh_options_get(guard.session, SSH_OPTIONS_HOST, &host);
  std::string where = KnownHostsName(host ? host : target.host, port);
  ssh_string_free_char(host);
  if (Status s = CheckHostKey(guard.session, where, known_hosts, options.accept_new_host_key); !s.ok()) return s;
  if (Status s = Authenticate(guard.session, description, target.identity_file); !s.ok()) return s;
  ssh_session session = guard.session;
  guard.session = nullptr;
  return std::unique_ptr<SshSession>(new SshSession(session, std::move(description)));
}

SshSession::SshSession(ssh_session_struct* session, std::string description)
    : session_(session), description_(std::move(description)) {}

SshSession::~SshSession() {
  ssh_disconnect(session_);
  ssh_free(session_);
}

Result<ExecResult> SshSession::Exec(const std::string& command, std::string_view stdin_data) {
  auto fail = [&](const std::string& what) {
    return Unavailable("SSH to " + description_ + ": " + what + ": " + ssh_get_error(session_));
  };
  ssh_channel channel = ssh_channel_new(session_);
  if (!channel) return fail("cannot make a channel");
  struct ChannelGuard {
    ssh_channel c;
    ~ChannelGuard() { CloseChannel(c); }
  } channel_guard{channel};
  if (ssh_channel_open_session(channel) != SSH_OK) return fail("cannot open a session channel");
  if (ssh_channel_request_exec(channel, command.c_str()) != SSH_OK) return fail("cannot run a command");
  size_t written = 0;
  while (written < stdin_data.size()) {
    uint32_t chunk = static_cast<uint32_t>(std::min<size_t>(stdin_data.size() - written, 64 * 1024));
    int n = ssh_channel_write(channel, stdin_data.data() + written, chunk);
    if (n < 0) return fail("cannot write the command's input");
    written += static_cast<size_t>(n);
  }
  if (ssh_channel_send_eof(channel) != SSH_OK) return fail("cannot close the command's input");

  ExecResult result;
  char buf[16 * 1024];
  while (true) {
    bool got = false;
    for (int is_stderr = 0; is_stderr <= 1; ++is_stderr) {
      int n = ssh_channel_read_nonblocking(channel, buf, sizeof buf, is_stderr);
      if (n == SSH_ERROR) return fail("lost the connection while reading the command's output");
      if (n > 0) {
        (is_stderr ? result.err : result.out).append(buf, static_cast<size_t>(n));
        got = true;
      }
    }
    if (got) continue;
    if (ssh_channel_is_eof(channel) || ssh_channel_is_closed(channel)) break;
    // Nothing buffered: wait for the socket (the next read processes what
    // arrives, for stdout, stderr or eof). The timeout only bounds a stall.
    pollfd socket_ready{ssh_get_fd(session_), POLLIN, 0};
    ::poll(&socket_ready, 1, 1000);
  }
  result.exit_status = ssh_channel_get_exit_status(channel);
  return result;
}

Result<ssh_channel_struct*> SshSession::OpenUnixForward(const std::string& remote_socket,
                                                        const std::string& bridge_command) {
  ssh_channel channel = ssh_channel_new(session_);
  if (!channel) return Unavailable("SSH to " + description_ + ": cannot make a channel: " + ssh_get_error(session_));
  // The originator address is informational only; OpenSSH ignores it.
  if (ssh_channel_open_forward_unix(channel, remote_socket.c_str(), "127.0.0.1", 0) == SSH_OK) return channel;
  std::string error = ssh_get_error(session_);
  ssh_channel_free(channel);
  if (!bridge_command.empty() && ssh_is_connected(session_)) return OpenBridge(remote_socket, bridge_command, error);
  return Unavailable("cannot reach " + remote_socket + " on " + description_ + " through SSH (" + error +
                     "): is the agent running there, and does sshd allow AllowStreamLocalForwarding?");
}

Result<ssh_channel_struct*> SshSession::OpenBridge(const std::string& remote_socket, const std::string& command,
                                                   const std::string& forward_error) {
  auto fail = [&](const std::string& why) -> Status {
    return Unavailable("cannot reach " + remote_socket + " on " + description_ + " through SSH: " + why +
                       " (forwarding: " + forward_error + ")");
  };
  ssh_channel channel = ssh_channel_new(session_);
  if (!channel) return fail(std::string("cannot make a channel: ") + ssh_get_error(session_));
  if (ssh_channel_open_session(channel) != SSH_OK || ssh_channel_request_exec(channel, command.c_str()) != SSH_OK) {
    std::string error = ssh_get_error(session_);
    CloseChannel(channel);
    return fail("cannot run the bridge: " + error);
  }
  // Wait for "ready" on stderr; the agent's bytes on stdout stay buffered
  // for the tunnel.
  std::string said;
  auto give_up = std::chrono::steady_clock::now() + std::chrono::seconds(10);
  while (said.find('\n') == std::string::npos) {
    char buf[512];
    int n = ssh_channel_read_nonblocking(channel, buf, sizeof buf, /*is_stderr=*/1);
    if (n == SSH_ERROR) break;
    if (n > 0) {
      said.append(buf, static_cast<size_t>(n));
      continue;
    }
    if (ssh_channel_is_eof(channel) || ssh_channel_is_closed(channel) ||
        std::chrono::steady_clock::now() > give_up) {
      break;
    }
    pollfd socket_ready{ssh_get_fd(session_), POLLIN, 0};
    ::poll(&socket_ready, 1, 200);
  }
  if (said.rfind("ready\n", 0) == 0) return channel;
  CloseChannel(channel);
  while (!said.empty() && said.back() == '\n') said.pop_back();
  return fail(said.empty() ? "the bridge said nothing" : said);
}

void SshSession::CloseChannel(ssh_channel_struct* channel) {
  if (!channel) return;
  if (ssh_channel_is_open(channel)) ssh_channel_close(channel);
  ssh_channel_free(channel);
}

}  // namespace gpuctl::client::ssh
