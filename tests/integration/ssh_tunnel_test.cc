// SocketTunnel against a real sshd: bytes both ways through a forwarded
// unix socket, more than the SSH window at once, several connections, and
// cleanup when the tunnel goes.
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include <cstring>
#include <filesystem>
#include <thread>

#include <gtest/gtest.h>

#include "client/ssh/socket_tunnel.h"
#include "client/ssh/ssh_session.h"
#include "tests/fakes/scoped_env.h"
#include "tests/integration/sshd_fixture.h"

namespace gpuctl::testing {
namespace {

using client::ssh::SocketTunnel;
using client::ssh::SshSession;

int ConnectUnix(const std::string& path) {
  int fd = ::socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
  sockaddr_un addr{};
  addr.sun_family = AF_UNIX;
  std::strncpy(addr.sun_path, path.c_str(), sizeof addr.sun_path - 1);
  if (::connect(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr) != 0) {
    ::close(fd);
    return -1;
  }
  return fd;
}

// Echoes every connection back until its peer closes: the "agent".
class EchoServer {
 public:
  explicit EchoServer(std::string path) : path_(std::move(path)) {
    listener_ = ::socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
    sockaddr_un addr{};
    addr.sun_family = AF_UNIX;
    std::strncpy(addr.sun_path, path_.c_str(), sizeof addr.sun_path - 1);
    ::bind(listener_, reinterpret_cast<sockaddr*>(&addr), sizeof addr);
    ::listen(listener_, 8);
    thread_ = std::thread([this] {
      std::vector<std::thread> echoes;
      while (true) {
        int conn = ::accept(listener_, nullptr, nullptr);
        if (conn < 0) break;
        echoes.emplace_back([conn] {
          char buf[65536];
          ssize_t n;
          while ((n = ::read(conn, buf, sizeof buf)) > 0) {
            if (::write(conn, buf, static_cast<size_t>(n)) != n) break;
          }
          ::close(conn);
        });
      }
      for (auto& echo : echoes) echo.join();
    });
  }
  ~EchoServer() {
    ::shutdown(listener_, SHUT_RDWR);
    ::close(listener_);
    thread_.join();
  }

 private:
  std::string path_;
  int listener_ = -1;
  std::thread thread_;
};

// Sends `size` bytes and reads back as many, on two threads (the echo
// answers while we are still sending).
std::string RoundTrip(int fd, size_t size, char seed) {
  std::string sent(size, '\0');
  for (size_t i = 0; i < size; ++i) sent[i] = static_cast<char>(seed + static_cast<char>(i % 251));
  std::thread writer([&] {
    size_t done = 0;
    while (done < sent.size()) {
      ssize_t n = ::write(fd, sent.data() + done, sent.size() - done);
      if (n <= 0) break;
      done += static_cast<size_t>(n);
    }
    ::shutdown(fd, SHUT_WR);
  });
  std::string got;
  char buf[65536];
  ssize_t n;
  while ((n = ::read(fd, buf, sizeof buf)) > 0) got.append(buf, static_cast<size_t>(n));
  writer.join();
  EXPECT_EQ(got.size(), sent.size());
  EXPECT_TRUE(got == sent) << "bytes changed in the tunnel";
  return got;
}

class SshTunnelTest : public SshdFixture {
 protected:
  std::shared_ptr<SshSession> Connect() {
    client::ssh::SshOptions options;
    options.ssh_dir = SshDir();
    options.accept_new_host_key = true;
    auto session = SshSession::Connect(
        {.user = "root", .host = "127.0.0.1", .port = port_, .identity_file = UserKey()}, options);
    EXPECT_TRUE(session.ok()) << session.status().ToString();
    return session.ok() ? std::shared_ptr<SshSession>(std::move(*session)) : nullptr;
  }
  ScopedEnv no_agent_{"SSH_AUTH_SOCK", std::nullopt};
};

TEST_F(SshTunnelTest, ForwardsBothWaysForSeveralConnectionsAndCleansUp) {
  std::string remote = dir_.path() + "/echo.sock";
  EchoServer echo(remote);
  auto session = Connect();
  ASSERT_NE(session, nullptr);
  auto tunnel = SocketTunnel::Start(session, remote);
  ASSERT_TRUE(tunnel.ok()) << tunnel.status().ToString();
  std::string local = (*tunnel)->address().substr(std::strlen("unix:"));
  auto dir_mode = std::filesystem::status(std::filesystem::path(local).parent_path()).permissions();
  EXPECT_EQ(dir_mode, std::filesystem::perms::owner_all);

  // Three at once, each larger than an SSH channel window, so flow control
  // and back-pressure are exercised.
  std::vector<std::thread> clients;
  for (char seed : {'a', 'k', 'x'}) {
    clients.emplace_back([&, seed] {
      int fd = ConnectUnix(local);
      ASSERT_GE(fd, 0);
      RoundTrip(fd, 6 * 1024 * 1024, seed);
      ::close(fd);
    });
  }
  for (auto& c : clients) c.join();
  // And one more after those closed.
  int fd = ConnectUnix(local);
  ASSERT_GE(fd, 0);
  RoundTrip(fd, 1000, 'z');
  ::close(fd);

  tunnel->reset();
  EXPECT_FALSE(std::filesystem::exists(local));
  EXPECT_FALSE(std::filesystem::exists(std::filesystem::path(local).parent_path()));
  // The session is usable again once the tunnel is gone.
  auto after = session->Exec("echo still here");
  ASSERT_TRUE(after.ok()) << after.status().ToString();
  EXPECT_EQ(after->out, "still here\n");
}

TEST_F(SshTunnelTest, MissingRemoteSocketIsUnavailableAtStart) {
  auto session = Connect();
  ASSERT_NE(session, nullptr);
  auto tunnel = SocketTunnel::Start(session, dir_.path() + "/nobody.sock");
  ASSERT_FALSE(tunnel.ok());
  EXPECT_EQ(tunnel.status().code(), ErrorCode::kUnavailable);
  EXPECT_NE(tunnel.status().message().find("nobody.sock"), std::string::npos) << tunnel.status().message();
}

}  // namespace
}  // namespace gpuctl::testing
