#include <gtest/gtest.h>

#include <deque>
#include <string>
#include <vector>

#include "client/resuming_event_stream.h"

namespace gpuctl::client {
namespace {

using namespace std::chrono_literals;

v1::AgentEvent Ev(uint64_t seq) {
  v1::AgentEvent e;
  e.set_seq(seq);
  e.set_kind("job_started");
  return e;
}

// One scripted WatchEvents call: the events it sends, then how it ends.
struct Call {
  std::vector<uint64_t> seqs;
  Status end;
};

// A scripted agent and a clock that moves only when the code sleeps.
struct FakeAgent {
  std::deque<Call> calls;
  std::deque<Status> probes;  // empty: the agent answers
  std::vector<v1::WatchEventsRequest> requests;
  int probe_count = 0;
  std::chrono::steady_clock::time_point now{std::chrono::hours(1)};

  EventStreamSeams Seams() {
    EventStreamSeams s;
    s.stream = [this](const v1::WatchEventsRequest& r, const EventStreamSeams::EventSink& sink) {
      requests.push_back(r);
      if (calls.empty()) return Unavailable("no more scripted calls");
      Call call = calls.front();
      calls.pop_front();
      for (uint64_t seq : call.seqs) {
        if (!sink(Ev(seq))) return Status::Ok();
      }
      return call.end;
    };
    s.probe = [this] {
      ++probe_count;
      if (probes.empty()) return Status::Ok();
      Status p = probes.front();
      probes.pop_front();
      return p;
    };
    s.sleep = [this](std::chrono::milliseconds d) { now += d; };
    s.now = [this] { return now; };
    return s;
  }
};

struct Outcome {
  Status status;
  std::vector<uint64_t> written;
  std::vector<std::string> notes;
};

Outcome Follow(FakeAgent& agent, EventStreamOptions options, size_t stop_after = SIZE_MAX) {
  Outcome run;
  auto write = [&](const v1::AgentEvent& e) {
    run.written.push_back(e.seq());
    return run.written.size() < stop_after;
  };
  auto note = [&](const std::string& line) { run.notes.push_back(line); };
  run.status = WatchEventsResuming(options, agent.Seams(), write, note);
  return run;
}

EventStreamOptions Options(bool follow, uint64_t after = 0) {
  EventStreamOptions o;
  o.request.set_after_seq(after);
  o.request.set_follow(follow);
  o.reconnect = follow;
  o.agent_address = "unix:/run/gpuctl/gpuctld.sock";
  return o;
}

TEST(WatchEventsResuming, WithoutFollowPrintsTheBacklogOnceAndNeverProbes) {
  FakeAgent agent;
  agent.calls.push_back({{4, 5}, Status::Ok()});
  Outcome run = Follow(agent, Options(false, 3));
  EXPECT_TRUE(run.status.ok());
  EXPECT_EQ(run.written, (std::vector<uint64_t>{4, 5}));
  ASSERT_EQ(agent.requests.size(), 1u);
  EXPECT_EQ(agent.requests[0].after_seq(), 3u);
  EXPECT_FALSE(agent.requests[0].follow());
  EXPECT_EQ(agent.probe_count, 0);
  EXPECT_TRUE(run.notes.empty());
}

TEST(WatchEventsResuming, WithoutFollowALostAgentIsAnError) {
  FakeAgent agent;
  agent.calls.push_back({{1}, Unavailable("cannot reach gpuctld")});
  Outcome run = Follow(agent, Options(false));
  EXPECT_EQ(run.status.code(), ErrorCode::kUnavailable);
  EXPECT_EQ(agent.requests.size(), 1u);
}

TEST(WatchEventsResuming, FollowFailsAtOnceWhenNobodyListens) {
  FakeAgent agent;
  agent.probes.push_back(Unavailable("cannot reach gpuctld at unix:/x"));
  Outcome run = Follow(agent, Options(true));
  EXPECT_EQ(run.status.code(), ErrorCode::kUnavailable);
  EXPECT_TRUE(agent.requests.empty());
  EXPECT_TRUE(run.notes.empty());
}

// seq rises across agent restarts (the events are journaled): a reconnected
// stream goes on after the last event written, none twice, none missed.
TEST(WatchEventsResuming, AfterAReconnectItGoesOnAfterTheLastEventWrittenAndSaysSo) {
  FakeAgent agent;
  agent.calls.push_back({{8, 9}, Unavailable("the agent closed the stream")});
  agent.calls.push_back({{10, 0, 12}, Unavailable("gone again")});  // 0: an events_dropped
  agent.calls.push_back({{13}, Status(ErrorCode::kInternal, "boom")});
  agent.probes = {Status::Ok(), Unavailable("down"), Unavailable("down"), Status::Ok(), Status::Ok()};
  Outcome run = Follow(agent, Options(true, 7));
  EXPECT_EQ(run.status.code(), ErrorCode::kInternal);  // not a lost agent: no retry
  EXPECT_EQ(run.written, (std::vector<uint64_t>{8, 9, 10, 0, 12, 13}));
  ASSERT_EQ(agent.requests.size(), 3u);
  EXPECT_EQ(agent.requests[0].after_seq(), 7u);
  EXPECT_EQ(agent.requests[1].after_seq(), 9u);
  EXPECT_EQ(agent.requests[2].after_seq(), 12u);
  for (const v1::WatchEventsRequest& r : agent.requests) EXPECT_TRUE(r.follow());
  ASSERT_EQ(run.notes.size(), 4u);  // lost, reconnected; lost, reconnected
  EXPECT_NE(run.notes[0].find("lost the agent at unix:/run/gpuctl/gpuctld.sock"), std::string::npos);
  EXPECT_EQ(run.notes[1], "gpuctl: reconnected to unix:/run/gpuctl/gpuctld.sock; going on after event 9");
  EXPECT_NE(run.notes[2].find("lost the agent"), std::string::npos);
  EXPECT_EQ(run.notes[3], "gpuctl: reconnected to unix:/run/gpuctl/gpuctld.sock; going on after event 12");
}

TEST(WatchEventsResuming, AReconnectBeforeAnyEventKeepsTheAfterAskedFor) {
  FakeAgent agent;
  agent.calls.push_back({{}, Unavailable("closed")});
  agent.calls.push_back({{6}, Status::Ok()});
  Outcome run = Follow(agent, Options(true, 5));
  EXPECT_TRUE(run.status.ok());
  ASSERT_EQ(agent.requests.size(), 2u);
  EXPECT_EQ(agent.requests[1].after_seq(), 5u);
  EXPECT_EQ(run.written, (std::vector<uint64_t>{6}));
}

TEST(WatchEventsResuming, AProbeThatAnswersWithAnErrorStillCountsAsBack) {
  FakeAgent agent;
  agent.calls.push_back({{}, Unavailable("closed")});
  agent.calls.push_back({{1}, Status::Ok()});
  agent.probes = {Status::Ok(), Status(ErrorCode::kInternal, "health sample failed")};
  Outcome run = Follow(agent, Options(true));
  EXPECT_TRUE(run.status.ok());
  EXPECT_EQ(run.written, (std::vector<uint64_t>{1}));
}

TEST(WatchEventsResuming, GivesUpAfterTheLimitAndSaysHowToContinue) {
  FakeAgent agent;
  agent.calls.push_back({{1}, Unavailable("closed")});
  agent.probes.push_back(Status::Ok());
  for (int i = 0; i < 1000; ++i) agent.probes.push_back(Unavailable("down"));
  EventStreamOptions options = Options(true);
  options.give_up_after = 10s;
  Outcome run = Follow(agent, options);
  EXPECT_EQ(run.status.code(), ErrorCode::kUnavailable);
  EXPECT_NE(run.status.message().find("could not reconnect within"), std::string::npos) << run.status.message();
  EXPECT_NE(run.status.message().find("gpuctl events -f"), std::string::npos);
  EXPECT_EQ(agent.probe_count, 1 + 20);  // 500 ms apart for 10 s
  EXPECT_EQ(run.notes.size(), 1u);
}

TEST(WatchEventsResuming, StopsWhenTheWriterDoes) {
  FakeAgent agent;
  agent.calls.push_back({{1, 2, 3}, Unavailable("closed")});
  Outcome run = Follow(agent, Options(true), /*stop_after=*/2);
  EXPECT_TRUE(run.status.ok());
  EXPECT_EQ(run.written, (std::vector<uint64_t>{1, 2}));
  EXPECT_EQ(agent.requests.size(), 1u);
}

}  // namespace
}  // namespace gpuctl::client
