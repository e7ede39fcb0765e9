// The owner loop on its own, with recording parts and the fake clock: parts
// start in their order before the owner thread, are ticked in their order
// after the posted calls, and the loop sleeps until the earliest part's
// wake (or passes again at once while a part is busy); calls before Start
// run at once, calls after Shutdown never.
#include "agents/train/job_owner_loop.h"

#include <gtest/gtest.h>

#include <atomic>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "tests/unit/train/job_parts_fixture.h"
#include "tests/unit/train/job_supervisor_fixture.h"

namespace gpuctl::train {
namespace {

using namespace std::chrono_literals;
using test_support::WaitFor;

// Writes what happens to it into a shared log.
class RecordingPart final : public JobPart {
 public:
  RecordingPart(std::string name, std::vector<std::string>& log, std::mutex& mutex)
      : name_(std::move(name)), log_(log), mutex_(mutex) {}
  void OnStart(JobTable& /*table*/) override { Note("start " + name_ + (on_owner_thread() ? " (owner)" : "")); }
  void Tick(JobTable& /*table*/, TimePoint now) override {
    last_tick = now;  // before the count a test waits on
    ++ticks;
    if (busy_passes > 0) --busy_passes;
    Note("tick " + name_);
  }
  TimePoint NextWake(const JobTable& /*table*/, TimePoint /*now*/) const override { return wake; }
  bool Busy() const override { return busy_passes > 0; }

  std::atomic<int> ticks{0};
  std::atomic<int> busy_passes{0};
  std::atomic<TimePoint> wake{TimePoint::max()};
  TimePoint last_tick{};
  std::thread::id starter_thread = std::this_thread::get_id();

 private:
  bool on_owner_thread() const { return std::this_thread::get_id() != starter_thread; }
  void Note(std::string what) {
    std::lock_guard lock(mutex_);
    log_.push_back(std::move(what));
  }
  std::string name_;
  std::vector<std::string>& log_;
  std::mutex& mutex_;
};

class JobOwnerLoopTest : public test_support::JobPartsFixture {
 protected:
  JobOwnerLoopTest() : first_("first", log_, mutex_), second_("second", log_, mutex_), loop_(table_, parts_, clock_) {
    parts_.Add(first_);
    parts_.Add(second_);
  }
  ~JobOwnerLoopTest() override { loop_.Shutdown(); }

  std::vector<std::string> Log() {
    std::lock_guard lock(mutex_);
    return log_;
  }

  std::mutex mutex_;
  std::vector<std::string> log_;
  RecordingPart first_;
  RecordingPart second_;
  JobParts parts_;
  JobOwnerLoop loop_;
};

TEST_F(JobOwnerLoopTest, PartsStartInOrderThenTickInOrderAfterTheCalls) {
  ASSERT_TRUE(loop_.RunOnOwner([&] { log_.push_back("call before start"); }, 1s));  // at once, here
  first_.wake = Now() + 1h;
  second_.wake = Now() + 1h;
  loop_.Start();
  ASSERT_TRUE(loop_.RunOnOwner(
      [&] {
        std::lock_guard lock(mutex_);
        log_.push_back("call");
      },
      1s));
  ASSERT_TRUE(WaitFor([&] { return second_.ticks > 0; }));
  std::vector<std::string> log = Log();
  ASSERT_GE(log.size(), 6u);
  EXPECT_EQ(std::vector<std::string>(log.begin(), log.begin() + 3),
            (std::vector<std::string>{"call before start", "start first", "start second"}));
  // The call woke the loop: its pass ticks each part after it.
  auto call = std::find(log.begin(), log.end(), "call");
  ASSERT_NE(call, log.end());
  ASSERT_GE(log.end() - call, 3);
  EXPECT_EQ(*(call + 1), "tick first");
  EXPECT_EQ(*(call + 2), "tick second");
}

TEST_F(JobOwnerLoopTest, TheLoopSleepsUntilTheEarliestPartsWake) {
  first_.wake = Now() + 10s;
  second_.wake = Now() + 1h;
  loop_.Start();
  std::this_thread::sleep_for(30ms);
  EXPECT_EQ(first_.ticks, 0);  // asleep: the fake clock stands still
  clock_.Advance(9s);
  std::this_thread::sleep_for(30ms);
  EXPECT_EQ(first_.ticks, 0);
  first_.wake = Now() + 1h;  // seen at the next wait; this one ends at +10 s
  clock_.Advance(1s);
  ASSERT_TRUE(WaitFor([&] { return first_.ticks > 0; }));
  EXPECT_EQ(first_.last_tick, Now());  // read after the count moved
  EXPECT_EQ(second_.ticks, 1);  // every part is ticked on every pass
}

TEST_F(JobOwnerLoopTest, ABusyPartGetsPassesAtOnce) {
  first_.wake = Now() + 1h;
  second_.wake = Now() + 1h;
  second_.busy_passes = 5;
  loop_.Start();
  ASSERT_TRUE(WaitFor([&] { return second_.busy_passes == 0; }));
  EXPECT_GE(first_.ticks, 5);
}

TEST_F(JobOwnerLoopTest, NoCallRunsAfterShutdown) {
  loop_.Start();
  loop_.Shutdown();
  bool ran = false;
  EXPECT_FALSE(loop_.RunOnOwner([&] { ran = true; }, 1s));
  EXPECT_FALSE(ran);
  loop_.Shutdown();  // idempotent
}

}  // namespace
}  // namespace gpuctl::train
