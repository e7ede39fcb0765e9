// StreamWriter, the one server-stream shape: finished exactly once on every
// path (its subclass ends, the server ends it, the client goes away in either
// order of OnCancel and a failed write, shutdown), never while a write is
// outstanding; and streams over a real (in-process) gRPC server all reach
// OnDone however their clients leave, so the server's shutdown never hangs.
#include "daemon/service/stream_writer.h"

#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <thread>

#include "gpuctl/v1/agent.grpc.pb.h"
#include "tests/unit/daemon/fake_server_writer.h"

namespace gpuctl::daemon {
namespace {

using namespace std::chrono_literals;
using EventWriter = test_support::FakeServerWriter<v1::AgentEvent>;

struct Counters {
  std::atomic<int> released{0};
  std::atomic<int> destroyed{0};
  std::atomic<int> client_gone{0};
};

// Writes `available` events (or endlessly when negative), then idles, or ends
// with `end` when one is set.
class CountingStream final : public StreamWriter<v1::AgentEvent> {
 public:
  CountingStream(Counters& counters, int available, std::optional<grpc::Status> end = std::nullopt,
             OpenStreams* streams = nullptr)
      : StreamWriter(streams), counters_(counters), available_(available), final_status_(std::move(end)) {
    Start();
  }
  ~CountingStream() override { ++counters_.destroyed; }

  void Add(int more) {
    Update([&] { available_ += more; });
  }
  using StreamWriter::Drop;
  using StreamWriter::Retain;

 private:
  Next Produce(v1::AgentEvent& out, grpc::Status& end) override {
    if (available_ != 0) {
      if (available_ > 0) --available_;
      out.set_seq(++written_);
      return Next::kWrite;
    }
    if (final_status_) {
      end = *final_status_;
      return Next::kEnd;
    }
    return Next::kIdle;
  }
  void ClientGone() override { ++counters_.client_gone; }
  void Release() override { ++counters_.released; }

  Counters& counters_;
  int available_;
  std::optional<grpc::Status> final_status_;
  uint64_t written_ = 0;
};

TEST(StreamWriter, CancelDuringAWriteFinishesOnceWhenTheWriteFails) {
  Counters counters;
  EventWriter writer;
  writer.Bind(new CountingStream(counters, 5));
  ASSERT_EQ(writer.writes(), 1u);
  writer.Cancel();
  EXPECT_TRUE(writer.finishes().empty());
  writer.WriteDone(false);
  ASSERT_EQ(writer.finishes().size(), 1u);
  EXPECT_EQ(writer.finishes()[0].error_code(), grpc::StatusCode::CANCELLED);
  EXPECT_FALSE(writer.finish_during_write());
  EXPECT_EQ(writer.writes(), 1u);
  writer.Done();
  EXPECT_EQ(counters.released, 1);
  EXPECT_EQ(counters.destroyed, 1);
  EXPECT_GE(counters.client_gone, 1);
}

TEST(StreamWriter, AFailedWriteBeforeTheCancelFinishesOnce) {
  Counters counters;
  EventWriter writer;
  writer.Bind(new CountingStream(counters, 5));
  writer.WriteDone(false);
  ASSERT_EQ(writer.finishes().size(), 1u);
  writer.Cancel();
  EXPECT_EQ(writer.finishes().size(), 1u);
  EXPECT_EQ(writer.writes(), 1u);
  writer.Done();
  EXPECT_EQ(counters.destroyed, 1);
}

TEST(StreamWriter, CancelWhileIdleFinishesAtOnce) {
  Counters counters;
  EventWriter writer;
  writer.Bind(new CountingStream(counters, 0));
  EXPECT_EQ(writer.writes(), 0u);
  writer.Cancel();
  ASSERT_EQ(writer.finishes().size(), 1u);
  writer.Done();
  EXPECT_EQ(counters.destroyed, 1);
}

TEST(StreamWriter, TheSubclassEndWaitsForTheWriteAndCarriesItsStatus) {
  Counters counters;
  EventWriter writer;
  writer.Bind(new CountingStream(counters, 2, grpc::Status(grpc::StatusCode::NOT_FOUND, "gone")));
  writer.WriteDone(true);
  EXPECT_TRUE(writer.finishes().empty());
  writer.WriteDone(true);
  ASSERT_EQ(writer.finishes().size(), 1u);
  EXPECT_EQ(writer.finishes()[0].error_code(), grpc::StatusCode::NOT_FOUND);
  EXPECT_EQ(writer.writes(), 2u);
  writer.Done();
}

TEST(StreamWriter, AServerEndDuringAWriteFinishesFromItsOnWriteDone) {
  Counters counters;
  EventWriter writer;
  auto* stream = new CountingStream(counters, -1);
  writer.Bind(stream);
  ASSERT_TRUE(writer.write_outstanding());
  stream->End(grpc::Status(grpc::StatusCode::UNAVAILABLE, "shutting down"));
  EXPECT_TRUE(writer.finishes().empty()) << "Finish while a write is outstanding";
  stream->End(grpc::Status(grpc::StatusCode::INTERNAL, "a second end is ignored"));
  writer.WriteDone(true);
  ASSERT_EQ(writer.finishes().size(), 1u);
  EXPECT_EQ(writer.finishes()[0].error_code(), grpc::StatusCode::UNAVAILABLE);
  EXPECT_EQ(writer.writes(), 1u) << "wrote after the end was decided";
  writer.Cancel();  // a cancel after the finish changes nothing
  EXPECT_EQ(writer.finishes().size(), 1u);
  writer.Done();
}

TEST(StreamWriter, WakeupsAfterTheFinishDoNothing) {
  Counters counters;
  EventWriter writer;
  auto* stream = new CountingStream(counters, 0);
  writer.Bind(stream);
  stream->Retain();  // a producer thread that outlives the RPC
  writer.Cancel();
  writer.Done();
  EXPECT_EQ(counters.released, 1);
  EXPECT_EQ(counters.destroyed, 0) << "freed under a producer that still holds it";
  stream->Add(3);
  EXPECT_EQ(writer.writes(), 0u);
  EXPECT_EQ(writer.finishes().size(), 1u);
  stream->Drop();
  EXPECT_EQ(counters.destroyed, 1);
}

TEST(OpenStreams, EndAllFinishesIdleStreamsAtOnceWritingOnesAfterTheirWriteAndLaterOnesAtOnce) {
  Counters counters;
  OpenStreams streams;
  EventWriter idle, busy, late;
  idle.Bind(new CountingStream(counters, 0, std::nullopt, &streams));
  busy.Bind(new CountingStream(counters, -1, std::nullopt, &streams));
  EXPECT_EQ(streams.size(), 2u);
  streams.EndAll(grpc::Status(grpc::StatusCode::UNAVAILABLE, "shutting down"));
  ASSERT_EQ(idle.finishes().size(), 1u);
  EXPECT_EQ(idle.finishes()[0].error_code(), grpc::StatusCode::UNAVAILABLE);
  EXPECT_TRUE(busy.finishes().empty());
  busy.WriteDone(true);
  ASSERT_EQ(busy.finishes().size(), 1u);
  EXPECT_EQ(busy.finishes()[0].error_code(), grpc::StatusCode::UNAVAILABLE);
  EXPECT_FALSE(busy.finish_during_write());

  late.Bind(new CountingStream(counters, -1, std::nullopt, &streams));
  EXPECT_TRUE(late.write_outstanding()) << "its first write was started before it was ended";
  late.WriteDone(true);
  ASSERT_EQ(late.finishes().size(), 1u);
  EXPECT_EQ(late.finishes()[0].error_code(), grpc::StatusCode::UNAVAILABLE);
  idle.Done();
  busy.Done();
  late.Done();
  EXPECT_EQ(streams.size(), 0u);
  EXPECT_EQ(counters.destroyed, 3);
}

// Over a real server: endless and idle streams whose clients cancel, or that
// the server ends, all reach OnDone, and the server shuts down at once.
class EndlessService final : public v1::Agent::CallbackService {
 public:
  EndlessService(Counters& counters, OpenStreams& streams) : counters_(counters), streams_(streams) {}
  grpc::ServerWriteReactor<v1::AgentEvent>* WatchEvents(grpc::CallbackServerContext* /*context*/,
                                                        const v1::WatchEventsRequest* request) override {
    return new CountingStream(counters_, request->follow() ? -1 : 0, std::nullopt, &streams_);
  }

 private:
  Counters& counters_;
  OpenStreams& streams_;
};

TEST(StreamWriterOverGrpc, EveryStreamEndsHoweverItsClientLeavesAndShutdownIsPrompt) {
  Counters counters;
  OpenStreams streams;
  EndlessService service(counters, streams);
  grpc::ServerBuilder builder;
  builder.RegisterService(&service);
  std::unique_ptr<grpc::Server> server = builder.BuildAndStart();
  auto stub = v1::Agent::NewStub(server->InProcessChannel(grpc::ChannelArguments()));

  // Busy streams cancelled by their clients mid-stream, many times over.
  constexpr int kCancelled = 200;
  for (int i = 0; i < kCancelled; ++i) {
    grpc::ClientContext context;
    v1::WatchEventsRequest request;
    request.set_follow(true);
    auto reader = stub->WatchEvents(&context, request);
    v1::AgentEvent e;
    for (int n = 0; n < 1 + i % 3; ++n) ASSERT_TRUE(reader->Read(&e));
    context.TryCancel();
    reader->Finish().IgnoreError();
  }
  auto all_done = [&](int n) {
    for (int i = 0; i < 500 && counters.destroyed < n; ++i) std::this_thread::sleep_for(10ms);
    return counters.destroyed == n;
  };
  EXPECT_TRUE(all_done(kCancelled)) << counters.destroyed << " of " << kCancelled << " cancelled streams ended";

  // Idle and busy streams left open: the server ends them all.
  constexpr int kOpen = 50;
  std::vector<std::unique_ptr<grpc::ClientContext>> contexts;
  std::vector<std::unique_ptr<grpc::ClientReader<v1::AgentEvent>>> readers;
  for (int i = 0; i < kOpen; ++i) {
    contexts.push_back(std::make_unique<grpc::ClientContext>());
    v1::WatchEventsRequest request;
    request.set_follow(i % 2 == 0);  // busy ones are never read: their writes stay in flight
    readers.push_back(stub->WatchEvents(contexts.back().get(), request));
  }
  for (int i = 0; i < 500 && streams.size() < kOpen; ++i) std::this_thread::sleep_for(10ms);
  ASSERT_EQ(streams.size(), static_cast<size_t>(kOpen));
  const auto start = std::chrono::steady_clock::now();
  streams.EndAll(grpc::Status(grpc::StatusCode::UNAVAILABLE, "shutting down"));
  server->Shutdown(std::chrono::system_clock::now() + 1s);
  server->Wait();
  EXPECT_LT(std::chrono::steady_clock::now() - start, 1500ms);
  EXPECT_EQ(counters.destroyed, kCancelled + kOpen);
  for (auto& context : contexts) context->TryCancel();
  for (auto& reader : readers) reader->Finish().IgnoreError();
}

}  // namespace
}  // namespace gpuctl::daemon
