// sys::SleepFor waits on the clock it is given: on a fake clock, until the
// test moves it past the pause, so polling loops are tested without real time.
#include <gtest/gtest.h>

#include <atomic>
#include <thread>

#include "agents/sys/clock.h"
#include "tests/fakes/fake_clock.h"

namespace gpuctl::sys {
namespace {

TEST(SleepFor, OnAFakeClockReturnsOnceTheClockHasMovedPastThePause) {
  gpuctl::testing::FakeClock clock;
  const auto start = clock.SteadyNow();
  std::atomic<bool> woke{false};
  std::chrono::steady_clock::time_point woke_at{};
  std::thread sleeper([&] {
    SleepFor(clock, std::chrono::seconds(30));
    woke_at = clock.SteadyNow();
    woke = true;
  });
  // A second of fake time per millisecond of real time, until it wakes.
  for (int i = 0; i < 100'000 && !woke; ++i) {
    clock.Advance(std::chrono::seconds(1));
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
  sleeper.join();
  EXPECT_GE(woke_at - start, std::chrono::seconds(30));
}

TEST(SleepFor, OnTheRealClockPausesAtLeastThePause) {
  RealClock clock;
  auto start = clock.SteadyNow();
  SleepFor(clock, std::chrono::milliseconds(20));
  EXPECT_GE(clock.SteadyNow() - start, std::chrono::milliseconds(20));
}

}  // namespace
}  // namespace gpuctl::sys
