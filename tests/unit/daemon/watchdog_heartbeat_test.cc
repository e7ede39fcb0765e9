// The guard loop's heartbeat (guard_setup.h): systemd's watchdog is fed from
// the guard loop at most every half interval, and never without one.
#include <gtest/gtest.h>

#include "daemon/server/guard_setup.h"
#include "tests/fakes/fake_clock.h"

namespace gpuctl::daemon {
namespace {

using std::chrono::microseconds;
using std::chrono::milliseconds;

TEST(WatchdogHeartbeat, FeedsAtMostEveryHalfInterval) {
  testing::FakeClock clock;
  int beats = 0;
  auto heartbeat = WatchdogHeartbeat(clock, microseconds(milliseconds(1000)), [&beats] { ++beats; });
  heartbeat();
  EXPECT_EQ(beats, 0) << "not at once: the start has just told systemd it is alive";
  clock.Advance(milliseconds(499));
  heartbeat();
  EXPECT_EQ(beats, 0);
  clock.Advance(milliseconds(1));
  heartbeat();
  heartbeat();
  EXPECT_EQ(beats, 1) << "once per half interval, however often the guard loops";
  clock.Advance(milliseconds(500));
  heartbeat();
  EXPECT_EQ(beats, 2);
}

TEST(WatchdogHeartbeat, NothingWithoutAWatchdog) {
  testing::FakeClock clock;
  int beats = 0;
  auto heartbeat = WatchdogHeartbeat(clock, std::nullopt, [&beats] { ++beats; });
  clock.Advance(std::chrono::hours(1));
  heartbeat();
  EXPECT_EQ(beats, 0);
}

}  // namespace
}  // namespace gpuctl::daemon
