// Stop escalation on its own, through the table and the fake clock: the
// loop is woken for a stop's deadline, SIGKILL goes out at it and not
// before, then the run is looked at again soon and settled as stopped.
#include "agents/train/stop_escalation.h"

#include <gtest/gtest.h>
#include <signal.h>

#include "tests/unit/train/job_parts_fixture.h"

namespace gpuctl::train {
namespace {

using namespace std::chrono_literals;
using Signal = testing::FakeProcessControl::SentSignal;

class StopEscalationTest : public test_support::JobPartsFixture {
 protected:
  StopEscalationTest() : stops_(monitor_, processes_) { hooks_.Add(stops_); }

  // A stop asked `grace` ago... from now: the request saved, SIGTERM sent.
  JobEntry& Stopping(const std::string& name, int64_t pid, std::chrono::milliseconds grace) {
    JobEntry& entry = PutRunning(Spec(name), pid);
    entry.record.stop_requested = true;
    entry.record.stop_deadline_unix_ms = table_.NowMs() + grace.count();
    return entry;
  }

  StopEscalation stops_;
};

TEST_F(StopEscalationTest, NoStopNoWake) {
  PutRunning(Spec("calm"), 5001);
  EXPECT_EQ(stops_.NextWake(table_, Now()), TimePoint::max());
  stops_.Tick(table_, Now());
  EXPECT_TRUE(procs_.signals().empty());
}

TEST_F(StopEscalationTest, SigkillAtTheDeadlineNotBeforeThenTheRunSettlesAsStopped) {
  Stopping("stubborn", 5001, 5s);
  procs_.SetReaction(5001, testing::FakeProcessControl::Reaction::kDiesOnSigkill);
  EXPECT_EQ(stops_.NextWake(table_, Now()), Now() + 5s);

  clock_.Advance(4s);
  stops_.Tick(table_, Now());
  EXPECT_TRUE(procs_.signals().empty());
  EXPECT_EQ(stops_.NextWake(table_, Now()), Now() + 1s);

  clock_.Advance(1s);
  stops_.Tick(table_, Now());
  EXPECT_EQ(procs_.signals(), (std::vector<Signal>{{5001, true, SIGKILL}}));
  // The run is about to be gone: looked at again in 50 ms, not at the
  // monitor's interval (an hour here).
  EXPECT_EQ(stops_.NextWake(table_, Now()), Now() + 50ms);
  EXPECT_TRUE(IsActive(table_.Find("stubborn")->record.state));

  clock_.Advance(50ms);
  stops_.Tick(table_, Now());
  const JobRecord& r = table_.Find("stubborn")->record;
  EXPECT_EQ(r.state, JobState::kStopped);
  EXPECT_EQ(r.state_reason, "stopped by request");
  EXPECT_EQ(procs_.signals().size(), 1u);  // one SIGKILL
  EXPECT_EQ(stops_.NextWake(table_, Now()), TimePoint::max());
  EXPECT_EQ(table_.Snapshot("stubborn")->state, JobState::kStopped);
  EXPECT_EQ(EventKinds(), (std::vector<std::string>{"job_ended"}));
}

TEST_F(StopEscalationTest, ARefreshPastTheDeadlineEscalatesToo) {
  // A read (train status) past the deadline refreshes the run: the hook
  // sends the SIGKILL there, once.
  Stopping("late", 5001, 1s);
  clock_.Advance(2s);
  monitor_.Refresh(*table_.Find("late"), 0);
  monitor_.Refresh(*table_.Find("late"), 0);
  EXPECT_EQ(procs_.signals(), (std::vector<Signal>{{5001, true, SIGKILL}}));
}

TEST_F(StopEscalationTest, TheEarliestDeadlineWakes) {
  Stopping("a", 5001, 30s);
  Stopping("b", 5002, 3s);
  EXPECT_EQ(stops_.NextWake(table_, Now()), Now() + 3s);
}

}  // namespace
}  // namespace gpuctl::train
