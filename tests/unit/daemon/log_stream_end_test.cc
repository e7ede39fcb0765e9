// Shutdown ends log followers wherever they are: waiting on the file watch
// hub (a quiet log) or in the middle of a write.
#include <gtest/gtest.h>

#include "daemon/service/log_stream.h"
#include "tests/unit/daemon/fake_server_writer.h"
#include "tests/unit/train/job_supervisor_fixture.h"

namespace gpuctl::daemon {
namespace {

using namespace std::chrono_literals;
using Writer = test_support::FakeServerWriter<v1::LogChunk>;

class LogStreamEndTest : public train::test_support::JobSupervisorFixture {
 protected:
  void SetUp() override {
    train::JobRecord job = StartOk(Spec("quiet"));
    train::test_support::Append(job.log_path, "only line\n");
  }
  void Follow(Writer& writer) {
    writer.Bind(new LogStreamReactor(Supervisor(), hub_, slots_, {.job = "quiet", .follow = true}, &streams_));
  }

  // No poll tick: the job is quiet, so a waiting follower stays waiting.
  sys::FileWatchHub hub_{{.poll_interval = 1h}};
  LogStreamSlots slots_{8};
  OpenStreams streams_;
};

TEST_F(LogStreamEndTest, EndAllFinishesFollowersWaitingOnTheFileAndOnesMidWrite) {
  Writer waiting, writing;
  Follow(waiting);
  waiting.WriteDone(true);  // the whole log is sent: it waits on the hub
  Follow(writing);          // its chunk is still in flight
  ASSERT_EQ(hub_.pending_waits(), 1u);
  ASSERT_EQ(slots_.open(), 2u);

  streams_.EndAll(grpc::Status(grpc::StatusCode::UNAVAILABLE, "gpuctld is shutting down"));
  ASSERT_EQ(waiting.finishes().size(), 1u);
  EXPECT_EQ(waiting.finishes()[0].error_code(), grpc::StatusCode::UNAVAILABLE);
  EXPECT_TRUE(writing.finishes().empty()) << "Finish while a write is outstanding";
  writing.WriteDone(true);
  ASSERT_EQ(writing.finishes().size(), 1u);
  EXPECT_EQ(writing.writes(), 1u);

  waiting.Done();
  writing.Done();
  EXPECT_EQ(slots_.open(), 0u);
  EXPECT_EQ(hub_.pending_waits(), 0u);
  EXPECT_EQ(streams_.size(), 0u);

  // One that comes after is ended at once, and its slot given back.
  Writer late;
  Follow(late);
  late.WriteDone(true);
  ASSERT_EQ(late.finishes().size(), 1u);
  EXPECT_EQ(late.finishes()[0].error_code(), grpc::StatusCode::UNAVAILABLE);
  late.Done();
  EXPECT_EQ(slots_.open(), 0u);
}

}  // namespace
}  // namespace gpuctl::daemon
