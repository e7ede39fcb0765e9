#include "agents/sys/unix_bridge.h"

#include <poll.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "agents/sys/unique_fd.h"

namespace gpuctl::sys {
namespace {

bool WriteAll(int fd, const char* data, size_t size) {
  while (size > 0) {
    ssize_t n = ::write(fd, data, size);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return false;
    data += n;
    size -= static_cast<size_t>(n);
  }
  return true;
}

}  // namespace

Status BridgeUnixSocket(const std::string& socket_path, int in_fd, int out_fd, int err_fd) {
  sockaddr_un addr{};
  addr.sun_family = AF_UNIX;
  if (socket_path.size() >= sizeof addr.sun_path) return InvalidArgument("socket path too long: " + socket_path);
  std::memcpy(addr.sun_path, socket_path.c_str(), socket_path.size() + 1);
  UniqueFd sock(::socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0));
  if (!sock.valid()) return ErrnoError("socket", errno);
  if (::connect(sock.get(), reinterpret_cast<sockaddr*>(&addr), sizeof addr) != 0) {
    return Unavailable("cannot connect to " + socket_path + ": " + std::strerror(errno) + " (is gpuctld running?)");
  }
  if (!WriteAll(err_fd, "ready\n", 6)) return IoError("cannot report readiness");

  char buf[64 * 1024];
  bool input_open = true;
  while (true) {
    pollfd fds[2] = {{sock.get(), POLLIN, 0}, {input_open ? in_fd : -1, POLLIN, 0}};
    if (::poll(fds, 2, -1) < 0) {
      if (errno == EINTR) continue;
      return ErrnoError("poll", errno);
    }
    if (fds[0].revents != 0) {
      ssize_t n = ::read(sock.get(), buf, sizeof buf);
      if (n < 0 && errno == EINTR) continue;
      if (n <= 0) return Status::Ok();  // the agent closed the connection
      if (!WriteAll(out_fd, buf, static_cast<size_t>(n))) return Status::Ok();  // the client went away
    }
    if (input_open && fds[1].revents != 0) {
      ssize_t n = ::read(in_fd, buf, sizeof buf);
      if (n < 0 && errno == EINTR) continue;
      if (n <= 0) {
        input_open = false;
        ::shutdown(sock.get(), SHUT_WR);
      } else if (!WriteAll(sock.get(), buf, static_cast<size_t>(n))) {
        return Status::Ok();
      }
    }
  }
}

Status BridgeUnixSocketToStdio(const std::string& socket_path) {
  return BridgeUnixSocket(socket_path, STDIN_FILENO, STDOUT_FILENO, STDERR_FILENO);
}

}  // namespace gpuctl::sys
