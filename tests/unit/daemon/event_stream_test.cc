// WatchEvents over an in-process gRPC channel: the reactor, the EventLog
// subscription behind it and the conversion to the wire.
#include "daemon/service/event_stream.h"

#include <gtest/gtest.h>

#include <nlohmann/json.hpp>
#include <limits>
#include <thread>

#include "daemon/service/event_convert.h"
#include "gpuctl/v1/agent.grpc.pb.h"
#include "tests/fakes/fake_clock.h"
#include "tests/fakes/wait_for.h"

namespace gpuctl::daemon {
namespace {

using namespace std::chrono_literals;

// The one RPC, served as AgentService::WatchEvents serves it.
class EventsOnlyService final : public v1::Agent::CallbackService {
 public:
  explicit EventsOnlyService(events::EventLog& log) : log_(log) {}
  grpc::ServerWriteReactor<v1::AgentEvent>* WatchEvents(grpc::CallbackServerContext* /*context*/,
                                                        const v1::WatchEventsRequest* request) override {
    return new EventStreamReactor(log_, request->after_seq(), request->follow());
  }

 private:
  events::EventLog& log_;
};

events::AgentEvent Event(const std::string& kind, const std::string& job = "") {
  events::AgentEvent e;
  e.kind = kind;
  e.job = job;
  e.message = kind + " happened";
  return e;
}

using gpuctl::testing::WaitFor;

class EventStream : public ::testing::Test {
 protected:
  void SetUp() override { Serve(1000); }
  void Serve(size_t capacity) {
    stub_.reset();
    if (server_) server_->Shutdown(std::chrono::system_clock::now());
    server_.reset();
    service_.reset();
    log_ = std::make_unique<events::EventLog>(clock_, capacity);
    service_ = std::make_unique<EventsOnlyService>(*log_);
    grpc::ServerBuilder builder;
    builder.RegisterService(service_.get());
    server_ = builder.BuildAndStart();
    stub_ = v1::Agent::NewStub(server_->InProcessChannel(grpc::ChannelArguments()));
  }
  void TearDown() override {
    log_->EndSubscriptions();
    server_->Shutdown(std::chrono::system_clock::now() + 1s);
  }

  struct Stream {
    grpc::ClientContext context;
    std::unique_ptr<grpc::ClientReader<v1::AgentEvent>> reader;
  };
  std::unique_ptr<Stream> Open(uint64_t after_seq, bool follow) {
    auto s = std::make_unique<Stream>();
    s->context.set_deadline(std::chrono::system_clock::now() + 10s);  // a hang fails, not blocks
    v1::WatchEventsRequest request;
    request.set_after_seq(after_seq);
    request.set_follow(follow);
    s->reader = stub_->WatchEvents(&s->context, request);
    return s;
  }

  testing::FakeClock clock_;
  std::unique_ptr<events::EventLog> log_;
  std::unique_ptr<EventsOnlyService> service_;
  std::unique_ptr<grpc::Server> server_;
  std::unique_ptr<v1::Agent::Stub> stub_;
};

TEST_F(EventStream, WithoutFollowSendsTheBacklogAndFinishesOk) {
  log_->Publish(Event("job_started", "a"));
  events::AgentEvent kill = Event("guard_kill", "a");
  kill.fields = {{"reaction_ms", 38}};
  log_->Publish(kill);
  log_->Publish(Event("job_ended", "a"));
  std::unique_ptr<Stream> s = Open(1, false);
  std::vector<v1::AgentEvent> got;
  v1::AgentEvent e;
  while (s->reader->Read(&e)) got.push_back(e);
  grpc::Status status = s->reader->Finish();
  EXPECT_TRUE(status.ok()) << status.error_message();
  ASSERT_EQ(got.size(), 2u);
  EXPECT_EQ(got[0].seq(), 2u);
  EXPECT_EQ(got[0].kind(), "guard_kill");
  EXPECT_EQ(got[0].job(), "a");
  EXPECT_EQ(got[0].message(), "guard_kill happened");
  EXPECT_GT(got[0].time_unix_ms(), 0);
  EXPECT_EQ(nlohmann::json::parse(got[0].fields_json())["reaction_ms"], 38);
  EXPECT_EQ(got[1].seq(), 3u);
}

TEST_F(EventStream, EmptyBacklogWithoutFollowFinishesAtOnce) {
  std::unique_ptr<Stream> s = Open(0, false);
  v1::AgentEvent e;
  EXPECT_FALSE(s->reader->Read(&e));
  EXPECT_TRUE(s->reader->Finish().ok());
}

// Numbers not used yet: said, with or without follow (a follower would
// otherwise skip the events up to them in silence). UINT64_MAX asks for
// nothing, as the client's probe does, and is no error.
TEST_F(EventStream, AnAfterPastTheNewestEventIsRefusedSayingTheNewest) {
  log_->Publish(Event("job_started", "a"));
  log_->Publish(Event("job_ended", "a"));
  for (bool follow : {false, true}) {
    std::unique_ptr<Stream> s = Open(7, follow);
    v1::AgentEvent e;
    EXPECT_FALSE(s->reader->Read(&e));
    grpc::Status status = s->reader->Finish();
    EXPECT_EQ(status.error_code(), grpc::StatusCode::INVALID_ARGUMENT) << follow;
    EXPECT_NE(status.error_message().find("--after 7 is past the newest event (2)"), std::string::npos)
        << status.error_message();
  }
  std::unique_ptr<Stream> at_newest = Open(2, false);
  v1::AgentEvent e;
  EXPECT_FALSE(at_newest->reader->Read(&e));
  EXPECT_TRUE(at_newest->reader->Finish().ok()) << "nothing newer yet is no error";
  std::unique_ptr<Stream> nothing = Open(std::numeric_limits<uint64_t>::max(), false);
  EXPECT_FALSE(nothing->reader->Read(&e));
  EXPECT_TRUE(nothing->reader->Finish().ok());
}

TEST_F(EventStream, FollowSendsTheBacklogThenLiveEventsUntilTheClientCancels) {
  log_->Publish(Event("old"));
  std::unique_ptr<Stream> s = Open(0, true);
  v1::AgentEvent e;
  ASSERT_TRUE(s->reader->Read(&e));
  EXPECT_EQ(e.kind(), "old");
  ASSERT_TRUE(WaitFor([&] { return log_->subscriber_count() == 1; }));
  std::thread publisher([&] {
    for (int i = 0; i < 5; ++i) log_->Publish(Event("live" + std::to_string(i)));
  });
  for (int i = 0; i < 5; ++i) {
    ASSERT_TRUE(s->reader->Read(&e));
    EXPECT_EQ(e.kind(), "live" + std::to_string(i));
    EXPECT_EQ(e.seq(), static_cast<uint64_t>(i + 2));
  }
  publisher.join();
  s->context.TryCancel();
  EXPECT_EQ(s->reader->Finish().error_code(), grpc::StatusCode::CANCELLED);
  EXPECT_TRUE(WaitFor([&] { return log_->subscriber_count() == 0; }));
}

TEST_F(EventStream, EndingSubscriptionsFinishesFollowersWithUnavailable) {
  std::unique_ptr<Stream> s = Open(0, true);
  ASSERT_TRUE(WaitFor([&] { return log_->subscriber_count() == 1; }));
  log_->EndSubscriptions();
  v1::AgentEvent e;
  EXPECT_FALSE(s->reader->Read(&e));
  grpc::Status status = s->reader->Finish();
  EXPECT_EQ(status.error_code(), grpc::StatusCode::UNAVAILABLE);
  EXPECT_NE(status.error_message().find("shutting down"), std::string::npos);
  // A follower that comes after is turned away the same way, at once.
  std::unique_ptr<Stream> late = Open(0, true);
  EXPECT_FALSE(late->reader->Read(&e));
  EXPECT_EQ(late->reader->Finish().error_code(), grpc::StatusCode::UNAVAILABLE);
}

TEST_F(EventStream, AClientThatFallsBehindIsToldWhatItMissedAndMemoryStaysBounded) {
  Serve(4);
  std::unique_ptr<Stream> s = Open(0, true);
  ASSERT_TRUE(WaitFor([&] { return log_->subscriber_count() == 1; }));
  constexpr uint64_t kTotal = 5000;
  std::thread publisher([&] {
    for (uint64_t i = 0; i < kTotal; ++i) log_->Publish(Event("e"));
  });
  uint64_t delivered = 0;
  uint64_t dropped = 0;
  uint64_t last = 0;
  v1::AgentEvent e;
  while (delivered + dropped < kTotal && s->reader->Read(&e)) {
    if (e.kind() == events::kEventsDroppedKind) {
      nlohmann::json f = nlohmann::json::parse(e.fields_json());
      EXPECT_EQ(e.seq(), 0u);
      EXPECT_EQ(f["first_seq"].get<uint64_t>(), last + 1);
      last = f["last_seq"].get<uint64_t>();
      dropped += f["count"].get<uint64_t>();
    } else {
      EXPECT_EQ(e.seq(), last + 1);
      last = e.seq();
      ++delivered;
    }
  }
  publisher.join();
  EXPECT_EQ(delivered + dropped, kTotal);
  EXPECT_EQ(last, kTotal);
  RecordProperty("dropped", std::to_string(dropped));
  s->context.TryCancel();
  s->reader->Finish().IgnoreError();
}

TEST_F(EventStream, BytesThatAreNotUtf8DoNotBreakTheStream) {
  events::AgentEvent e = Event("cuda_oom", "job");
  e.message = "bad \xff\xfe bytes from a log";
  e.fields = {{"line", "x\xc3"}};
  log_->Publish(e);
  log_->Publish(Event("next"));
  std::unique_ptr<Stream> s = Open(0, false);
  v1::AgentEvent got;
  ASSERT_TRUE(s->reader->Read(&got));
  EXPECT_EQ(got.message(), "bad \xEF\xBF\xBD\xEF\xBF\xBD bytes from a log");
  EXPECT_EQ(nlohmann::json::parse(got.fields_json())["line"], "x\xEF\xBF\xBD");
  ASSERT_TRUE(s->reader->Read(&got));
  EXPECT_EQ(got.kind(), "next");
  EXPECT_TRUE(s->reader->Finish().ok());
}

TEST(EventConvert, TextFromALogBecomesValidUtf8) {
  events::AgentEvent e;
  e.kind = "cuda_oom";
  e.job = "j";
  e.message = "1.2\xe9 GiB is free";
  v1::AgentEvent out;
  ToProto(e, out);
  EXPECT_EQ(out.message(), "1.2\xEF\xBF\xBD GiB is free");
}

TEST(EventConvert, FieldsAreAlwaysAJsonObject) {
  events::AgentEvent e;
  e.seq = 9;
  e.time_unix_ms = 1234;
  e.kind = "guard_warning";
  e.fields = nullptr;
  v1::AgentEvent out;
  ToProto(e, out);
  EXPECT_EQ(out.seq(), 9u);
  EXPECT_EQ(out.time_unix_ms(), 1234);
  EXPECT_EQ(out.job(), "");
  EXPECT_EQ(out.fields_json(), "{}");
  e.fields = nlohmann::json::array({1, 2});
  ToProto(e, out);
  EXPECT_EQ(out.fields_json(), R"({"value":[1,2]})");
}

}  // namespace
}  // namespace gpuctl::daemon
