// WatchHealth streams on the hub: a watcher whose client leaves mid-write is
// finished once and unsubscribed; the hub's Stop finishes idle watchers at
// once and busy ones after their write, and turns later ones away.
#include "daemon/service/health_watch.h"

#include <gtest/gtest.h>

#include <atomic>
#include <thread>

#include "tests/fakes/fake_clock.h"
#include "tests/unit/daemon/fake_server_writer.h"
#include "tests/fakes/wait_for.h"

namespace gpuctl::daemon {
namespace {

using namespace std::chrono_literals;
using Writer = test_support::FakeServerWriter<v1::HealthSnapshot>;

using gpuctl::testing::WaitFor;

class HealthWatchTest : public ::testing::Test {
 protected:
  Result<v1::HealthSnapshot> Sample() {
    v1::HealthSnapshot snapshot;
    snapshot.set_sampled_at_unix_ms(++samples_);
    return snapshot;
  }
  std::atomic<int> samples_{0};
  testing::FakeClock clock_;
  HealthWatchHub hub_{[this] { return Sample(); }, clock_};
};

TEST_F(HealthWatchTest, AClientGoneMidWriteIsFinishedOnceAndUnsubscribed) {
  Writer writer;
  writer.Bind(hub_.Subscribe(100ms));
  ASSERT_TRUE(WaitFor([&] { return writer.writes() == 1; }));  // the first snapshot goes out at once
  writer.Cancel();
  EXPECT_TRUE(writer.finishes().empty()) << "Finish while a write is outstanding";
  writer.WriteDone(false);
  ASSERT_EQ(writer.finishes().size(), 1u);
  EXPECT_FALSE(writer.finish_during_write());
  writer.Done();
  EXPECT_EQ(hub_.subscriber_count(), 0u);
}

TEST_F(HealthWatchTest, StopFinishesIdleWatchersAtOnceBusyOnesAfterTheirWriteAndLaterOnesAtOnce) {
  Writer idle, busy;
  idle.Bind(hub_.Subscribe(100ms));
  busy.Bind(hub_.Subscribe(100ms));
  ASSERT_TRUE(WaitFor([&] { return idle.writes() == 1 && busy.writes() == 1; }));
  idle.WriteDone(true);
  hub_.Stop();
  ASSERT_EQ(idle.finishes().size(), 1u);
  EXPECT_EQ(idle.finishes()[0].error_code(), grpc::StatusCode::UNAVAILABLE);
  EXPECT_TRUE(busy.finishes().empty());
  busy.WriteDone(true);
  ASSERT_EQ(busy.finishes().size(), 1u);
  EXPECT_EQ(busy.finishes()[0].error_code(), grpc::StatusCode::UNAVAILABLE);
  idle.Done();
  busy.Done();

  Writer late;
  late.Bind(hub_.Subscribe(100ms));
  ASSERT_EQ(late.finishes().size(), 1u);
  EXPECT_EQ(late.finishes()[0].error_code(), grpc::StatusCode::UNAVAILABLE);
  late.Done();
  EXPECT_EQ(hub_.subscriber_count(), 0u);
}

}  // namespace
}  // namespace gpuctl::daemon
