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
#include <string>
#include <vector>

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
  // Every datagram already queued, without waiting: a datagram to a local
  // socket is queued by the time sendto returns.
  std::vector<std::string> Queued() {
    std::vector<std::string> out;
    char buf[256];
    ssize_t n = 0;
    while ((n = ::recv(fd_, buf, sizeof buf, MSG_DONTWAIT)) >= 0) out.emplace_back(buf, static_cast<size_t>(n));
    return out;
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
  // Destroyed (joined): whatever it sent is queued by now, and is nothing
  // but watchdog beats.
  for (const std::string& beat : systemd.Queued()) EXPECT_EQ(beat, "WATCHDOG=1");
}

// One beat as it starts, then one per interval and none at destruction:
// with an interval of an hour, exactly one. The destructor must interrupt
// the hour's wait (a feeder that slept it out would hang here), and must not
// beat on its way out.
TEST(SystemdNotifyTest, FeederBeatsAtOnceThenOncePerIntervalAndNotOnTheWayOut) {
  testing::TempDir dir;
  NotifyReceiver systemd(dir.path() + "/notify");
  ASSERT_TRUE(systemd.bound());
  testing::ScopedEnv env("NOTIFY_SOCKET", dir.path() + "/notify");
  {
    WatchdogFeeder feeder(std::chrono::hours(1));
    EXPECT_EQ(systemd.Next(), "WATCHDOG=1") << "a feeder beats as soon as it starts";
  }
  EXPECT_EQ(systemd.Queued(), std::vector<std::string>{}) << "beats after the first, within the hour";
}

}  // namespace
}  // namespace gpuctl::sys
