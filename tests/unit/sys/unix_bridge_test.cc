// gpuctld --bridge: stdin to a unix socket and back, through pipes, against
// an echo server of the test's own.
#include "agents/sys/unix_bridge.h"

#include <gtest/gtest.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include <cstring>
#include <thread>

#include "tests/fakes/temp_dir.h"

namespace gpuctl::sys {
namespace {

std::string ReadAll(int fd) {
  std::string out;
  char buf[4096];
  while (true) {
    ssize_t n = ::read(fd, buf, sizeof buf);
    if (n <= 0) return out;
    out.append(buf, static_cast<size_t>(n));
  }
}

TEST(UnixBridgeTest, CopiesBothWaysAndSaysReadyFirst) {
  testing::TempDir dir;
  std::string path = dir.path() + "/agent.sock";
  int listener = ::socket(AF_UNIX, SOCK_STREAM, 0);
  sockaddr_un addr{};
  addr.sun_family = AF_UNIX;
  std::memcpy(addr.sun_path, path.c_str(), path.size() + 1);
  ASSERT_EQ(::bind(listener, reinterpret_cast<sockaddr*>(&addr), sizeof addr), 0);
  ASSERT_EQ(::listen(listener, 1), 0);
  // Echoes what it reads, upper-cased, until the client half-closes.
  std::thread server([listener] {
    int conn = ::accept(listener, nullptr, nullptr);
    std::string got = ReadAll(conn);
    for (char& c : got) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
    (void)!::write(conn, got.data(), got.size());
    ::close(conn);
  });
  int in[2], out[2], err[2];
  ASSERT_EQ(::pipe(in), 0);
  ASSERT_EQ(::pipe(out), 0);
  ASSERT_EQ(::pipe(err), 0);
  std::string sent(200'000, 'x');
  sent += "\nend";
  std::thread writer([&] {
    (void)!::write(in[1], sent.data(), sent.size());
    ::close(in[1]);
  });
  std::string received;
  std::thread reader([&] { received = ReadAll(out[0]); });
  Status s = BridgeUnixSocket(path, in[0], out[1], err[1]);
  EXPECT_TRUE(s.ok()) << s.ToString();
  writer.join();
  server.join();
  ::close(out[1]);
  reader.join();
  ::close(err[1]);
  std::string expected = sent;
  for (char& c : expected) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
  EXPECT_EQ(received, expected);
  EXPECT_EQ(ReadAll(err[0]), "ready\n");
  for (int fd : {in[0], out[0], err[0], listener}) ::close(fd);
}

TEST(UnixBridgeTest, NoAgentIsAnErrorAndNoReady) {
  testing::TempDir dir;
  int err[2];
  ASSERT_EQ(::pipe(err), 0);
  Status s = BridgeUnixSocket(dir.path() + "/missing.sock", STDIN_FILENO, STDOUT_FILENO, err[1]);
  EXPECT_EQ(s.code(), ErrorCode::kUnavailable);
  EXPECT_NE(s.message().find("missing.sock"), std::string::npos);
  ::close(err[1]);
  EXPECT_EQ(ReadAll(err[0]), "");
  ::close(err[0]);
}

}  // namespace
}  // namespace gpuctl::sys
