// `train logs -f` across attempts, on the client: a separator line where the
// next attempt's log begins (on a line of its own), none for the attempt a
// stream starts in or a resumed stream finds again; a resumed stream asks for
// the attempt it was in; a queued job is said on stderr.
#include <gtest/gtest.h>

#include <deque>
#include <string>
#include <vector>

#include "client/log_follow.h"
#include "client/resuming_log_stream.h"

namespace gpuctl::client {
namespace {

v1::LogChunk LogDataChunk(uint64_t offset, std::string data) {
  v1::LogChunk chunk;
  chunk.set_offset(offset);
  chunk.set_data(std::move(data));
  return chunk;
}

v1::LogChunk AttemptStartChunk(uint32_t attempt, std::string run_id, std::vector<std::string> changes,
                          uint64_t offset = 0) {
  v1::LogChunk chunk = LogDataChunk(offset, "");
  chunk.set_attempt_start(true);
  chunk.set_attempt(attempt);
  chunk.set_run_id(std::move(run_id));
  for (std::string& c : changes) chunk.add_changes(std::move(c));
  return chunk;
}

v1::LogChunk QueuedChunk(std::string waiting_for) {
  v1::LogChunk chunk;
  chunk.set_queued(true);
  chunk.set_waiting_for(std::move(waiting_for));
  return chunk;
}

// An agent that plays whole LogChunks: each StreamLogs call one script.
struct ScriptedLogAgent {
  struct Call {
    std::vector<v1::LogChunk> chunks;
    Status end;
  };
  std::deque<Call> calls;
  std::vector<v1::StreamLogsRequest> requests;
  std::chrono::steady_clock::time_point now{};
  std::string written;
  std::vector<std::string> notes;

  Status Run(const v1::StreamLogsRequest& request) {
    LogStreamOptions options;
    options.request = request;
    options.reconnect = request.follow();
    options.agent_address = "unix:/run/gpuctl/gpuctld.sock";
    LogStreamSeams seams;
    seams.stream = [this](const v1::StreamLogsRequest& r, const LogStreamSeams::ChunkSink& sink) {
      requests.push_back(r);
      if (calls.empty()) return Unavailable("no agent");
      Call call = calls.front();
      calls.pop_front();
      for (const v1::LogChunk& chunk : call.chunks) {
        if (!sink(chunk)) return Status::Ok();
      }
      return call.end;
    };
    seams.probe = [] { return Status::Ok(); };
    seams.sleep = [this](std::chrono::milliseconds d) { now += d; };
    seams.now = [this] { return now; };
    return StreamLogResuming(
        options, seams,
        [this](std::string_view bytes) {
          written += bytes;
          return true;
        },
        [this](const std::string& line) { notes.push_back(line); });
  }
};

v1::StreamLogsRequest FollowAcrossAttempts(const std::string& name) {
  v1::StreamLogsRequest request;
  request.set_name(name);
  request.set_follow(true);
  request.set_across_attempts(true);
  return request;
}

TEST(LogAttemptsFollow, ASeparatorLineSaysWhereTheNextAttemptBegins) {
  ScriptedLogAgent agent;
  const std::vector<std::string> changes = {"PYTORCH_CUDA_ALLOC_CONF: (unset) -> expandable_segments:True",
                                           "--max-anchors: 1024 -> 768"};
  agent.calls.push_back({{AttemptStartChunk(1, "run-1", {}), LogDataChunk(0, "step 1\n"),
                          LogDataChunk(7, "CUDA out of memory"), AttemptStartChunk(2, "run-2", changes),
                          LogDataChunk(0, "step 1 again\n"), AttemptStartChunk(3, "run-3", {}),
                          LogDataChunk(0, "done\n")},
                         Status::Ok()});
  ASSERT_TRUE(agent.Run(FollowAcrossAttempts("llm")).ok());
  EXPECT_EQ(agent.written,
            "step 1\n"
            "CUDA out of memory\n"  // the newline the log lacked, so the separator has a line of its own
            "--- attempt 2 (run run-2): PYTORCH_CUDA_ALLOC_CONF: (unset) -> expandable_segments:True, "
            "--max-anchors: 1024 -> 768 ---\n"
            "step 1 again\n"
            "--- attempt 3 (run run-3) ---\n"
            "done\n");
  EXPECT_TRUE(agent.notes.empty());
}

// The connection drops in attempt 2: the resumed stream asks for attempt 2
// at the next byte (attempt 0, "the current run", would be wrong if another
// relaunch came meanwhile), and the agent's repeat of attempt 2's start is
// no new separator.
TEST(LogAttemptsFollow, AResumedStreamAsksForTheAttemptItWasIn) {
  ScriptedLogAgent agent;
  agent.calls.push_back({{AttemptStartChunk(1, "run-1", {}), LogDataChunk(0, "a1\n"),
                          AttemptStartChunk(2, "run-2", {"x: 1 -> 2"}), LogDataChunk(0, "a2 first\n")},
                         Unavailable("socket closed")});
  agent.calls.push_back({{AttemptStartChunk(2, "run-2", {"x: 1 -> 2"}, 9), LogDataChunk(9, "a2 second\n"),
                          AttemptStartChunk(3, "run-3", {"x: 2 -> 3"}), LogDataChunk(0, "a3\n")},
                         Status::Ok()});
  ASSERT_TRUE(agent.Run(FollowAcrossAttempts("llm")).ok());
  EXPECT_EQ(agent.written,
            "a1\n--- attempt 2 (run run-2): x: 1 -> 2 ---\na2 first\na2 second\n"
            "--- attempt 3 (run run-3): x: 2 -> 3 ---\na3\n");
  ASSERT_EQ(agent.requests.size(), 2u);
  EXPECT_EQ(agent.requests[0].attempt(), 0u);
  EXPECT_EQ(agent.requests[1].attempt(), 2u);
  EXPECT_EQ(agent.requests[1].from_offset(), 9u);
  EXPECT_TRUE(agent.requests[1].across_attempts());
}

// --tail: the agent chooses the start; its attempt_start says where, so a
// stream lost before any byte resumes there, not at the tail of a later log.
TEST(LogAttemptsFollow, TheFirstAttemptStartAnchorsATail) {
  LogOffsetTracker tracker(std::nullopt);
  EXPECT_FALSE(tracker.EnterAttempt(2, 4000));
  EXPECT_EQ(tracker.next_offset(), 4000u);
  EXPECT_EQ(tracker.attempt(), 2u);
  v1::StreamLogsRequest original = FollowAcrossAttempts("llm");
  original.set_tail_lines(5);
  v1::StreamLogsRequest resumed = ResumeRequest(original, tracker);
  EXPECT_EQ(resumed.from_offset(), 4000u);
  EXPECT_FALSE(resumed.has_tail_lines());
  EXPECT_EQ(resumed.attempt(), 2u);
  EXPECT_FALSE(tracker.EnterAttempt(2, 4000));  // the same attempt again: nothing to say
  EXPECT_TRUE(tracker.EnterAttempt(3, 0));
  EXPECT_EQ(tracker.next_offset(), 0u);
}

TEST(LogAttemptsFollow, AQueuedJobIsSaidOnStderr) {
  ScriptedLogAgent following;
  following.calls.push_back({{QueuedChunk("1 GPU: GPU 0 held by job a"), QueuedChunk("1 GPU: GPU 0 held by job a"),
                              AttemptStartChunk(1, "run-1", {}), LogDataChunk(0, "started\n")},
                             Status::Ok()});
  ASSERT_TRUE(following.Run(FollowAcrossAttempts("b")).ok());
  EXPECT_EQ(following.written, "started\n");
  EXPECT_EQ(following.notes, std::vector<std::string>{
                                 "gpuctl: b is queued (waiting for 1 GPU: GPU 0 held by job a); following it once "
                                 "it starts"});

  ScriptedLogAgent once;
  once.calls.push_back({{QueuedChunk("1 GPU: GPU 0 held by job a")}, Status::Ok()});
  v1::StreamLogsRequest request = FollowAcrossAttempts("b");
  request.set_follow(false);
  ASSERT_TRUE(once.Run(request).ok());
  EXPECT_EQ(once.written, "");
  EXPECT_EQ(once.notes, std::vector<std::string>{
                            "gpuctl: b is queued (waiting for 1 GPU: GPU 0 held by job a): nothing is written yet"});
}

// The agent's text in the separator (a checkpoint path in a change, a run
// id) goes to stdout: escaped, so it cannot move the cursor or end the line.
TEST(LogAttemptsFollow, TheSeparatorEscapesTheAgentsText) {
  v1::LogChunk chunk = AttemptStartChunk(2, "run\x1b[2J", {"resume from /ckpt/a\nb\x07"});
  const std::string line = AttemptSeparator(chunk);
  EXPECT_EQ(line.find('\x1b'), std::string::npos) << line;
  EXPECT_EQ(line.find('\x07'), std::string::npos) << line;
  EXPECT_EQ(line.find('\n'), line.size() - 1) << line;
  EXPECT_EQ(line.rfind("--- attempt 2 (run ", 0), 0u) << line;
}

}  // namespace
}  // namespace gpuctl::client
