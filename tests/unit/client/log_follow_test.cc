#include <gtest/gtest.h>

#include <deque>
#include <set>
#include <string>
#include <vector>

#include "client/log_follow.h"
#include "client/resuming_log_stream.h"

namespace gpuctl::client {
namespace {

std::string Take(LogOffsetTracker& t, uint64_t offset, std::string_view data, uint64_t* gap = nullptr) {
  LogOffsetTracker::Accepted a = t.Accept(offset, data);
  if (gap) *gap = a.gap_bytes;
  return std::string(a.bytes);
}

TEST(LogOffsetTracker, ContiguousChunksPassThrough) {
  LogOffsetTracker t(0);
  EXPECT_EQ(Take(t, 0, "hello "), "hello ");
  EXPECT_EQ(Take(t, 6, "world\n"), "world\n");
  EXPECT_EQ(t.next_offset(), 12u);
}

TEST(LogOffsetTracker, OverlapDropsWhatWasWritten) {
  LogOffsetTracker t(0);
  EXPECT_EQ(Take(t, 0, "abcdef"), "abcdef");
  uint64_t gap = 99;
  EXPECT_EQ(Take(t, 3, "defghi", &gap), "ghi");
  EXPECT_EQ(gap, 0u);
  EXPECT_EQ(t.next_offset(), 9u);
  EXPECT_EQ(Take(t, 0, "abcdefghi"), "");  // a full repeat writes nothing
  EXPECT_EQ(Take(t, 2, "cd"), "");
  EXPECT_EQ(t.next_offset(), 9u);
}

TEST(LogOffsetTracker, GapIsReportedAndTheChunkStillWritten) {
  LogOffsetTracker t(0);
  EXPECT_EQ(Take(t, 0, "abc"), "abc");
  uint64_t gap = 0;
  EXPECT_EQ(Take(t, 10, "xyz", &gap), "xyz");
  EXPECT_EQ(gap, 7u);
  EXPECT_EQ(t.next_offset(), 13u);
}

TEST(LogOffsetTracker, EmptyChunksChangeNothing) {
  LogOffsetTracker t(5);
  uint64_t gap = 0;
  EXPECT_EQ(Take(t, 100, "", &gap), "");
  EXPECT_EQ(gap, 0u);
  EXPECT_EQ(t.next_offset(), 5u);
  EXPECT_EQ(Take(t, 5, "a"), "a");
  EXPECT_EQ(Take(t, 6, ""), "");
  EXPECT_EQ(t.next_offset(), 6u);
}

TEST(LogOffsetTracker, TailLetsTheFirstChunkChooseTheStart) {
  LogOffsetTracker t(std::nullopt);
  EXPECT_FALSE(t.next_offset().has_value());
  EXPECT_EQ(Take(t, 0, ""), "");  // empty: still unanchored
  EXPECT_FALSE(t.next_offset().has_value());
  uint64_t gap = 99;
  EXPECT_EQ(Take(t, 4000, "last line\n", &gap), "last line\n");
  EXPECT_EQ(gap, 0u);
  EXPECT_EQ(t.next_offset(), 4010u);
}

TEST(LogOffsetTracker, FromOffsetExpectsTheFirstChunkThere) {
  LogOffsetTracker t(100);
  uint64_t gap = 0;
  EXPECT_EQ(Take(t, 90, "0123456789abc", &gap), "abc");
  EXPECT_EQ(gap, 0u);
  EXPECT_EQ(t.next_offset(), 103u);
}

TEST(LogOffsetTracker, AfterACutTheNewContentIsTakenWhole) {
  LogOffsetTracker t(0);
  EXPECT_EQ(Take(t, 0, "abcdef"), "abcdef");
  EXPECT_EQ(t.StartOver(0), 6u);
  EXPECT_EQ(t.next_offset(), 0u);
  EXPECT_EQ(Take(t, 0, "xy"), "xy");  // not an overlap of "ab"
  EXPECT_EQ(t.next_offset(), 2u);
  LogOffsetTracker unanchored(std::nullopt);
  EXPECT_EQ(unanchored.StartOver(0), std::nullopt);
  EXPECT_EQ(unanchored.next_offset(), 0u);
}

TEST(ResumeRequest, ContinuesAtTheNextByteWithoutTail) {
  v1::StreamLogsRequest original;
  original.set_name("job");
  original.set_tail_lines(20);
  original.set_follow(true);
  LogOffsetTracker t(std::nullopt);
  // Nothing anchored yet: the tail still applies.
  EXPECT_EQ(ResumeRequest(original, t).tail_lines(), 20u);
  EXPECT_EQ(ResumeRequest(original, t).from_offset(), 0u);
  (void)t.Accept(500, "0123456789");
  v1::StreamLogsRequest r = ResumeRequest(original, t);
  EXPECT_EQ(r.name(), "job");
  EXPECT_EQ(r.from_offset(), 510u);
  EXPECT_FALSE(r.has_tail_lines());  // a tail of 0 would start at the end
  EXPECT_TRUE(r.follow());

  original.set_tail_lines(0);
  LogOffsetTracker none_yet(std::nullopt);
  EXPECT_TRUE(ResumeRequest(original, none_yet).has_tail_lines());
  EXPECT_EQ(ResumeRequest(original, none_yet).tail_lines(), 0u);
}

// A scripted agent: each StreamLogs call plays one "attempt" (chunks, then a
// final status); probes answer from a queue; the clock moves only on sleep.
struct FakeAgent {
  struct Attempt {
    std::vector<std::pair<uint64_t, std::string>> chunks;
    Status end;
  };
  std::deque<Attempt> attempts;
  std::set<std::pair<size_t, size_t>> truncated;  // (attempt, chunk) sent with LogChunk.truncated
  size_t attempt_number = 0;
  std::deque<Status> probes;  // empty: Ok
  std::vector<v1::StreamLogsRequest> requests;
  int probe_calls = 0;
  std::chrono::steady_clock::time_point now{};
  std::string written;
  std::vector<std::string> notes;

  LogStreamSeams Seams() {
    LogStreamSeams seams;
    seams.stream = [this](const v1::StreamLogsRequest& request, const LogStreamSeams::ChunkSink& sink) {
      requests.push_back(request);
      if (attempts.empty()) return Unavailable("no agent");
      Attempt attempt = attempts.front();
      attempts.pop_front();
      const size_t number = attempt_number++;
      for (size_t i = 0; i < attempt.chunks.size(); ++i) {
        v1::LogChunk chunk;
        chunk.set_offset(attempt.chunks[i].first);
        chunk.set_data(attempt.chunks[i].second);
        chunk.set_truncated(truncated.contains({number, i}));
        if (!sink(chunk)) return Status::Ok();
      }
      return attempt.end;
    };
    seams.probe = [this] {
      ++probe_calls;
      if (probes.empty()) return Status::Ok();
      Status s = probes.front();
      probes.pop_front();
      return s;
    };
    seams.sleep = [this](std::chrono::milliseconds d) { now += d; };
    seams.now = [this] { return now; };
    return seams;
  }

  Status Run(const LogStreamOptions& options, size_t stop_after_bytes = SIZE_MAX) {
    return StreamLogResuming(
        options, Seams(),
        [&](std::string_view bytes) {
          written += bytes;
          return written.size() < stop_after_bytes;
        },
        [&](const std::string& line) { notes.push_back(line); });
  }
};

LogStreamOptions Follow(std::string name) {
  LogStreamOptions options;
  options.request.set_name(std::move(name));
  options.request.set_follow(true);
  options.reconnect = true;
  options.agent_address = "unix:/run/gpuctl/gpuctld.sock";
  return options;
}

TEST(StreamLogResuming, ResumesAfterAnAgentRestartWithoutLossOrRepeat) {
  FakeAgent agent;
  agent.attempts.push_back({{{0, "step 1\n"}, {7, "step 2\n"}}, Unavailable("socket closed")});
  // The restarted agent is asked from offset 14; it re-sends a little anyway.
  agent.attempts.push_back({{{12, "2\nstep 3\n"}, {21, "done\n"}}, Status::Ok()});
  agent.probes = {Status::Ok(), Unavailable("down"), Unavailable("down"), Status::Ok()};
  Status s = agent.Run(Follow("job"));
  ASSERT_TRUE(s.ok()) << s.ToString();
  EXPECT_EQ(agent.written, "step 1\nstep 2\nstep 3\ndone\n");
  ASSERT_EQ(agent.requests.size(), 2u);
  EXPECT_EQ(agent.requests[1].from_offset(), 14u);
  EXPECT_EQ(agent.requests[1].tail_lines(), 0u);
  EXPECT_TRUE(agent.requests[1].follow());
  ASSERT_EQ(agent.notes.size(), 1u);
  EXPECT_EQ(agent.notes[0], "gpuctl: lost the agent at unix:/run/gpuctl/gpuctld.sock, reconnecting...");
  EXPECT_EQ(agent.now - std::chrono::steady_clock::time_point{}, std::chrono::milliseconds(1500));
}

TEST(StreamLogResuming, GivesUpAfterTheWindow) {
  FakeAgent agent;
  agent.attempts.push_back({{{0, "abc"}}, Unavailable("socket closed")});
  agent.probes.push_back(Status::Ok());
  for (int i = 0; i < 1000; ++i) agent.probes.push_back(Unavailable("down"));
  Status s = agent.Run(Follow("job"));
  EXPECT_EQ(s.code(), ErrorCode::kUnavailable);
  EXPECT_NE(s.message().find("--from-offset 3"), std::string::npos) << s.message();
  EXPECT_EQ(agent.now - std::chrono::steady_clock::time_point{}, std::chrono::seconds(120));
  EXPECT_EQ(agent.probe_calls, 1 + 240);
  EXPECT_EQ(agent.written, "abc");
}

TEST(StreamLogResuming, UnreachableAtTheStartFailsAtOnce) {
  FakeAgent agent;
  agent.probes.push_back(Unavailable("cannot reach gpuctld"));
  Status s = agent.Run(Follow("job"));
  EXPECT_EQ(s.code(), ErrorCode::kUnavailable);
  EXPECT_TRUE(agent.requests.empty());
  EXPECT_TRUE(agent.notes.empty());
}

TEST(StreamLogResuming, JobGoneWhileReconnectingEndsIt) {
  FakeAgent agent;
  agent.attempts.push_back({{}, Unavailable("socket closed")});
  agent.probes = {Status::Ok(), NotFound("no job 'job'")};
  Status s = agent.Run(Follow("job"));
  EXPECT_EQ(s.code(), ErrorCode::kNotFound);
}

TEST(StreamLogResuming, WithoutFollowAnErrorEndsIt) {
  FakeAgent agent;
  agent.attempts.push_back({{{0, "abc"}}, Unavailable("socket closed")});
  LogStreamOptions options;
  options.request.set_name("job");
  Status s = agent.Run(options);
  EXPECT_EQ(s.code(), ErrorCode::kUnavailable);
  EXPECT_EQ(agent.probe_calls, 0);
  EXPECT_EQ(agent.requests.size(), 1u);
}

TEST(StreamLogResuming, AClosedStdoutStopsQuietly) {
  FakeAgent agent;
  agent.attempts.push_back({{{0, "abc"}, {3, "def"}, {6, "ghi"}}, Status::Ok()});
  Status s = agent.Run(Follow("job"), 4);
  EXPECT_TRUE(s.ok());
  EXPECT_EQ(agent.written, "abcdef");
}

TEST(StreamLogResuming, AGapIsNoted) {
  FakeAgent agent;
  agent.attempts.push_back({{{0, "abc"}, {10, "xyz"}}, Status::Ok()});
  LogStreamOptions options;
  options.request.set_name("job");
  ASSERT_TRUE(agent.Run(options).ok());
  EXPECT_EQ(agent.written, "abcxyz");
  ASSERT_EQ(agent.notes.size(), 1u);
  EXPECT_EQ(agent.notes[0], "gpuctl: warning: 7 bytes of the log at offset 3 were never received");
}

TEST(StreamLogResuming, TailIsKeptUntilTheFirstByteArrives) {
  FakeAgent agent;
  agent.attempts.push_back({{}, Unavailable("socket closed")});
  agent.attempts.push_back({{{900, "last\n"}}, Status::Ok()});
  LogStreamOptions options = Follow("job");
  options.request.set_tail_lines(10);
  ASSERT_TRUE(agent.Run(options).ok());
  ASSERT_EQ(agent.requests.size(), 2u);
  EXPECT_EQ(agent.requests[1].tail_lines(), 10u);
  EXPECT_EQ(agent.requests[1].from_offset(), 0u);
  EXPECT_EQ(agent.written, "last\n");
}

TEST(StreamLogResuming, TailZeroStartsWhereTheAgentSays) {
  FakeAgent agent;
  agent.attempts.push_back({{{5000, "new\n"}}, Status::Ok()});
  LogStreamOptions options = Follow("job");
  options.request.set_tail_lines(0);
  ASSERT_TRUE(agent.Run(options).ok());
  EXPECT_EQ(agent.written, "new\n");
  EXPECT_EQ(agent.notes, std::vector<std::string>{});  // no "5000 bytes never received"
  ASSERT_EQ(agent.requests.size(), 1u);
  EXPECT_TRUE(agent.requests[0].has_tail_lines());
  EXPECT_EQ(agent.requests[0].tail_lines(), 0u);
}

// copytruncate under a follow: the agent says the log was cut and sends the
// new content from its start; the client writes it whole (no overlap trimmed
// away, no torn line) and says so on stderr, also when the cut happened
// while it was reconnecting.
TEST(StreamLogResuming, ATruncatedLogIsSaidAndFollowedFromItsNewStart) {
  FakeAgent agent;
  agent.attempts.push_back(
      {{{0, "step 1\n"}, {7, "step 2\n"}, {0, ""}, {0, "step 3\n"}, {7, "step 4\n"}}, Unavailable("socket closed")});
  agent.truncated.insert({0, 2});
  agent.attempts.push_back({{{0, "step 5\n"}}, Status::Ok()});
  agent.truncated.insert({1, 0});
  ASSERT_TRUE(agent.Run(Follow("job")).ok());
  EXPECT_EQ(agent.written, "step 1\nstep 2\nstep 3\nstep 4\nstep 5\n");
  ASSERT_EQ(agent.requests.size(), 2u);
  EXPECT_EQ(agent.requests[1].from_offset(), 14u);
  ASSERT_EQ(agent.notes.size(), 3u);
  const std::string cut =
      "gpuctl: output.log of job was truncated (it is shorter than the 14 bytes written so far), e.g. by "
      "logrotate's copytruncate; following it from its new start";
  EXPECT_EQ(agent.notes[0], cut);
  EXPECT_NE(agent.notes[1].find("lost the agent"), std::string::npos);
  EXPECT_EQ(agent.notes[2], cut);
}

}  // namespace
}  // namespace gpuctl::client
