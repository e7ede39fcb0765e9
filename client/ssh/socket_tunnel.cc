#include "client/ssh/socket_tunnel.h"

#include <fcntl.h>
#include <poll.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <vector>

#include <libssh/libssh.h>

#include "client/ssh/ssh_session.h"
#include "client/ssh/tunnel_link.h"

namespace gpuctl::client::ssh {
namespace {

std::string TempBase() {
  const char* tmp = std::getenv("TMPDIR");
  return (tmp && *tmp) ? tmp : "/tmp";
}

Result<sys::UniqueFd> ListenUnix(const std::string& path) {
  sockaddr_un addr{};
  if (path.size() >= sizeof addr.sun_path) return InvalidArgument("tunnel socket path too long: " + path);
  sys::UniqueFd fd(::socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0));
  if (!fd.valid()) return ErrnoError("socket", errno);
  addr.sun_family = AF_UNIX;
  std::memcpy(addr.sun_path, path.c_str(), path.size() + 1);
  if (::bind(fd.get(), reinterpret_cast<sockaddr*>(&addr), sizeof addr) != 0) return ErrnoError("bind " + path, errno);
  if (::listen(fd.get(), 64) != 0) return ErrnoError("listen " + path, errno);
  return fd;
}

}  // namespace

Result<std::unique_ptr<SocketTunnel>> SocketTunnel::Start(std::shared_ptr<SshSession> session,
                                                          const std::string& remote_socket,
                                                          const std::string& bridge_command) {
  Result<ssh_channel> first = session->OpenUnixForward(remote_socket, bridge_command);
  if (!first.ok()) return first.status();
  ssh_channel spare = *first;
  // mkdtemp makes the directory 0700: the socket inside is ours alone.
  std::string templ = TempBase() + "/gpuctl-tunnel-XXXXXX";
  if (::mkdtemp(templ.data()) == nullptr) {
    SshSession::CloseChannel(spare);
    return ErrnoError("creating a private directory for the SSH tunnel under " + TempBase(), errno);
  }
  Result<sys::UniqueFd> listener = ListenUnix(templ + "/agent.sock");
  int wake[2];
  if (!listener.ok() || ::pipe2(wake, O_CLOEXEC | O_NONBLOCK) != 0) {
    Status error = listener.ok() ? ErrnoError("pipe", errno) : listener.status();
    SshSession::CloseChannel(spare);
    std::filesystem::remove_all(templ);
    return error;
  }
  return std::unique_ptr<SocketTunnel>(new SocketTunnel(std::move(session), remote_socket, bridge_command, templ,
                                                        std::move(*listener), sys::UniqueFd(wake[0]),
                                                        sys::UniqueFd(wake[1]), spare));
}

SocketTunnel::SocketTunnel(std::shared_ptr<SshSession> session, std::string remote_socket,
                           std::string bridge_command, std::string dir,
                           sys::UniqueFd listener, sys::UniqueFd wake_read, sys::UniqueFd wake_write,
                           ssh_channel_struct* spare)
    : session_(std::move(session)),
      remote_socket_(std::move(remote_socket)),
      bridge_command_(std::move(bridge_command)),
      dir_(std::move(dir)),
      local_socket_(dir_ + "/agent.sock"),
      listener_(std::move(listener)),
      wake_read_(std::move(wake_read)),
      wake_write_(std::move(wake_write)),
      spare_(spare),
      thread_([this] { Run(); }) {}

SocketTunnel::~SocketTunnel() {
  char stop = 1;
  (void)!::write(wake_write_.get(), &stop, 1);
  thread_.join();
  SshSession::CloseChannel(spare_);
  listener_.Reset();
  std::error_code ignored;
  std::filesystem::remove_all(dir_, ignored);
}

void SocketTunnel::Run() {
  std::vector<std::unique_ptr<TunnelLink>> links;
  bool session_alive = true;
  while (true) {
    std::vector<pollfd> fds = {{wake_read_.get(), POLLIN, 0}, {listener_.get(), POLLIN, 0}};
    if (session_alive) fds.push_back({ssh_get_fd(session_->raw()), POLLIN, 0});
    const size_t first_link = fds.size();
    // Links accepted below join the poll next round; only these have a pollfd.
    const size_t polled_links = links.size();
    for (const auto& link : links) fds.push_back({link->local_fd(), link->WantedEvents(), 0});
    if (::poll(fds.data(), fds.size(), 1000) < 0 && errno != EINTR) break;
    if (fds[0].revents != 0) break;

    if (fds[1].revents & POLLIN) {
      int local = ::accept4(listener_.get(), nullptr, nullptr, SOCK_CLOEXEC | SOCK_NONBLOCK);
      if (local >= 0) {
        sys::UniqueFd conn(local);
        ssh_channel channel = spare_;
        spare_ = nullptr;
        if (!channel && session_alive) {
          Result<ssh_channel> opened = session_->OpenUnixForward(remote_socket_, bridge_command_);
          if (opened.ok()) channel = *opened;
        }
        // With no channel the connection is closed at once: gRPC sees the
        // agent as unreachable and says so.
        if (channel) links.push_back(std::make_unique<TunnelLink>(std::move(conn), channel));
      }
    }
    for (size_t i = 0; i < polled_links; ++i) {
      if (fds[first_link + i].revents != 0) links[i]->OnLocalReady(fds[first_link + i].revents);
    }
    // Drain every channel each round: libssh may have buffered data for any
    // of them while it read the socket for another.
    for (auto& link : links) link->PumpFromChannel();
    session_alive = session_alive && ssh_is_connected(session_->raw()) != 0;
    std::erase_if(links, [&](const std::unique_ptr<TunnelLink>& link) { return link->done() || !session_alive; });
  }
}

}  // namespace gpuctl::client::ssh
