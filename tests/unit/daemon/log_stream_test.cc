// LogStreamReactor driven through the orders of reactions gRPC may use when
// a client goes away mid-stream (a `train logs -f` killed with -9): whatever
// the order, the stream is finished exactly once, never while a write is
// outstanding, and OnDone gives its slot back.
#include "daemon/service/log_stream.h"

#include <gtest/gtest.h>

#include "tests/unit/daemon/fake_server_writer.h"
#include "tests/unit/train/job_supervisor_fixture.h"

namespace gpuctl::daemon {
namespace {

using namespace std::chrono_literals;
using LogWriter = test_support::FakeServerWriter<v1::LogChunk>;

class LogStreamTest : public train::test_support::JobSupervisorFixture {
 protected:
  // A running job whose log holds `text`, followed by a new stream bound to `writer`.
  LogStreamReactor* Follow(LogWriter& writer, const std::string& text = "step 1 | loss 2.5\n") {
    if (!started_) {
      train::JobRecord job = StartOk(Spec("chatty"));
      train::test_support::Append(job.log_path, text);
      log_path_ = job.log_path;
      started_ = true;
    }
    auto* reactor = new LogStreamReactor(Supervisor(), hub_, slots_, {.job = "chatty", .follow = true});
    writer.Bind(reactor);
    return reactor;
  }

  sys::FileWatchHub hub_{{.poll_interval = 20ms}};
  LogStreamSlots slots_{4};
  bool started_ = false;
  std::string log_path_;
};

TEST_F(LogStreamTest, CancelBeforeTheFailedWriteFinishesOnceAndFreesTheSlot) {
  LogWriter writer;
  Follow(writer);
  ASSERT_EQ(writer.writes(), 1u);
  ASSERT_EQ(slots_.open(), 1u);

  // The client is killed with a chunk in flight: gRPC reports the cancel
  // first, then the write's failure.
  writer.Cancel();
  EXPECT_TRUE(writer.finishes().empty()) << "Finish while a write is outstanding";
  writer.WriteDone(false);
  ASSERT_EQ(writer.finishes().size(), 1u) << "never finished: gRPC would never call OnDone, the slot leaks";
  EXPECT_FALSE(writer.finish_during_write());
  writer.Done();
  EXPECT_EQ(slots_.open(), 0u);
}

TEST_F(LogStreamTest, FailedWriteBeforeTheCancelFinishesOnceAndFreesTheSlot) {
  LogWriter writer;
  Follow(writer);
  ASSERT_EQ(writer.writes(), 1u);
  writer.WriteDone(false);
  writer.Cancel();
  ASSERT_EQ(writer.finishes().size(), 1u);
  EXPECT_FALSE(writer.finish_during_write());
  EXPECT_EQ(writer.writes(), 1u) << "wrote again after the client was gone";
  writer.Done();
  EXPECT_EQ(slots_.open(), 0u);
}

TEST_F(LogStreamTest, CancelWhileWaitingOnTheFileFinishesAtOnce) {
  LogWriter writer;
  Follow(writer);
  writer.WriteDone(true);  // all there is was written: the stream waits on the hub
  ASSERT_EQ(writer.writes(), 1u);
  // Waiting again at once after each poll tick.
  EXPECT_TRUE(train::test_support::WaitFor([&] { return hub_.pending_waits() == 1; }));
  writer.Cancel();
  ASSERT_EQ(writer.finishes().size(), 1u);
  EXPECT_EQ(writer.finishes()[0].error_code(), grpc::StatusCode::CANCELLED);
  writer.Done();
  EXPECT_EQ(slots_.open(), 0u);
  EXPECT_EQ(hub_.pending_waits(), 0u);
}

TEST_F(LogStreamTest, ManyKilledFollowersGiveEverySlotBack) {
  // Three rounds of as many followers as there are slots, each killed
  // mid-chunk in one order or the other; a new follower is then accepted.
  for (int round = 0; round < 3; ++round) {
    std::vector<std::unique_ptr<LogWriter>> writers;
    for (size_t i = 0; i < slots_.max_open(); ++i) {
      writers.push_back(std::make_unique<LogWriter>());
      Follow(*writers.back());
    }
    ASSERT_EQ(slots_.open(), slots_.max_open());
    for (size_t i = 0; i < writers.size(); ++i) {
      LogWriter& w = *writers[i];
      if (i % 2 == 0) {
        w.Cancel();
        w.WriteDone(false);
      } else {
        w.WriteDone(false);
        w.Cancel();
      }
      ASSERT_EQ(w.finishes().size(), 1u) << "round " << round << " follower " << i;
      w.Done();
    }
    EXPECT_EQ(slots_.open(), 0u) << "round " << round;
  }
  LogWriter last;
  Follow(last);
  EXPECT_EQ(last.writes(), 1u);
  EXPECT_TRUE(last.finishes().empty());
  last.Cancel();
  last.WriteDone(false);
  ASSERT_EQ(last.finishes().size(), 1u);
  last.Done();
}

TEST_F(LogStreamTest, NewDataWakesTheStreamAndTheJobsEndFinishesItOk) {
  LogWriter writer;
  Follow(writer, "first\n");
  writer.WriteDone(true);
  train::test_support::Append(log_path_, "second\n");
  ASSERT_TRUE(train::test_support::WaitFor([&] { return writer.writes() == 2; }));
  ASSERT_EQ(writer.written()[1].data(), "second\n");
  EXPECT_EQ(writer.written()[1].offset(), 6u);
  writer.WriteDone(true);
  EndJob(Get("chatty"), "0\n");
  ASSERT_EQ(Get("chatty").state, train::JobState::kSucceeded);
  ASSERT_TRUE(train::test_support::WaitFor([&] { return writer.finishes().size() == 1; }));
  EXPECT_TRUE(writer.finishes()[0].ok()) << writer.finishes()[0].error_message();
  writer.Done();
  EXPECT_EQ(slots_.open(), 0u);
}

}  // namespace
}  // namespace gpuctl::daemon
