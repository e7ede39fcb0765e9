// sd_notify spoken directly: datagrams to a socket of the test's own, as
// systemd's would receive them, and $WATCHDOG_USEC read as
// sd_watchdog_enabled reads it.
#include "agents/sys/systemd_notify.h"

#include <gtest/gtest.h>
#include <poll.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include <cstring>

#include "tests/fakes/scoped_env.h"
#include "tests/fakes/temp_dir.h"

namespace gpuctl::sys {
namespace {

// A datagram socket bound where NOTIFY_SOCKET will point.
class NotifyReceiver {
 public:
  explicit NotifyReceiver(const std::string& name) : name_(name) {
    fd_ = ::socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0);
    sockaddr_un addr{};
    addr.sun_family = AF_UNIX;
    std::memcpy(addr.sun_path, name.data(), name.size());
    if (addr.sun_path[0] == '@') addr.sun_path[0] = '\0';
    socklen_t len = static_cast<socklen_t>(offsetof(sockaddr_un, sun_path) + name.size());
    bound_ = ::bind(fd_, reinterpret_cast<sockaddr*>(&addr), len) == 0;
  }
  ~NotifyReceiver() { ::close(fd_); }
  bool bound() const { return bound_; }
  // The next datagram, or "" after 2 s.
  std::string Next() {
    pollfd p{fd_, POLLIN, 0};
    if (::poll(&p, 1, 2000) != 1) return "";
    char buf[256];
    ssize_t n = ::recv(fd_, buf, sizeof buf, 0);
    return n > 0 ? std::string(buf, static_cast<size_t>(n)) : "";
  }

 private:
  std::string name_;
  int fd_ = -1;
  bool bound_ = false;
};

TEST(SystemdNotifyTest, SendsToAPathSocket) {
  testing::TempDir dir;
  NotifyReceiver systemd(dir.path() + "/notify");
  ASSERT_TRUE(systemd.bound());
  ASSERT_TRUE(SendNotify(dir.path() + "/notify", "READY=1").ok());
  EXPECT_EQ(systemd.Next(), "READY=1");
}

TEST(SystemdNotifyTest, SendsToAnAbstractSocketAndThroughTheEnvironment) {
  std::string name = "@gpuctl-notify-test-" + std::to_string(::getpid());
  NotifyReceiver systemd(name);
  ASSERT_TRUE(systemd.bound());
  testing::ScopedEnv env("NOTIFY_SOCKET", name);
  NotifyReady();
  EXPECT_EQ(systemd.Next(), "READY=1");
  NotifyStopping();
  EXPECT_EQ(systemd.Next(), "STOPPING=1");
}

TEST(SystemdNotifyTest, NoSocketIsANoOpAndBadOnesAreErrors) {
  EXPECT_TRUE(SendNotify("", "READY=1").ok());
  EXPECT_EQ(SendNotify("relative/path", "READY=1").code(), ErrorCode::kInvalidArgument);
  EXPECT_FALSE(SendNotify("/nonexistent/gpuctl/notify", "READY=1").ok());
  EXPECT_EQ(SendNotify("/" + std::string(200, 'x'), "READY=1").code(), ErrorCode::kInvalidArgument);
}

TEST(SystemdNotifyTest, WatchdogUsecAsSdWatchdogEnabledReadsIt) {
  EXPECT_EQ(ParseWatchdogUsec("10000000", nullptr, 42), std::chrono::microseconds(10'000'000));
  EXPECT_EQ(ParseWatchdogUsec("10000000", "42", 42), std::chrono::microseconds(10'000'000));
  EXPECT_EQ(ParseWatchdogUsec("10000000", "43", 42), std::nullopt) << "meant for another process";
  EXPECT_EQ(ParseWatchdogUsec(nullptr, nullptr, 42), std::nullopt);
  EXPECT_EQ(ParseWatchdogUsec("0", nullptr, 42), std::nullopt);
  EXPECT_EQ(ParseWatchdogUsec("-5", nullptr, 42), std::nullopt);
  EXPECT_EQ(ParseWatchdogUsec("10s", nullptr, 42), std::nullopt);
  EXPECT_EQ(ParseWatchdogUsec("10000000", "x", 42), std::nullopt);
}

TEST(SystemdNotifyTest, FeederBeatsUntilDestroyed) {
  testing::TempDir dir;
  NotifyReceiver systemd(dir.path() + "/notify");
  ASSERT_TRUE(systemd.bound());
  testing::ScopedEnv env("NOTIFY_SOCKET", dir.path() + "/notify");
  {
    WatchdogFeeder feeder(std::chrono::milliseconds(20));
    EXPECT_EQ(systemd.Next(), "WATCHDOG=1");
    EXPECT_EQ(systemd.Next(), "WATCHDOG=1");
  }
  // Destroyed: it stops promptly (the join above did not hang) and beats no
  // more once what was in flight is read.
  while (!systemd.Next().empty()) {
  }
  SUCCEED();
}

}  // namespace
}  // namespace gpuctl::sys
