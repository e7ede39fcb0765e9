// `gpuctl train logs` on the agent's host: the agent names ranges of the log
// and the client reads them itself (LogChunk.local); where it cannot, the
// stream is asked again from the first byte not yet written, without the
// offer, and nothing is lost or repeated.
#include <gtest/gtest.h>

#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "client/resuming_log_stream.h"

namespace gpuctl::client {
namespace {

constexpr const char* kHostLog = "/var/lib/gpuctl/jobs/job/output.log";

// An agent whose log is `file`: a request with a boot id is answered with
// ranges of range_bytes, one without with the bytes themselves. The reader
// here reads `file` in pieces of 2 bytes and fails at unreadable_from (a log
// of another user, a path only the agent's container has).
struct HostAgent {
  explicit HostAgent(std::string log, std::optional<uint64_t> unreadable = std::nullopt)
      : file(std::move(log)), unreadable_from(unreadable) {}
  std::string file;
  uint64_t range_bytes = 4;
  std::optional<uint64_t> unreadable_from;
  bool ranges_unasked = false;                // names ranges even to a request without a boot id
  std::optional<size_t> first_call_drops_after;  // chunks, then kUnavailable (an agent restart)
  std::vector<v1::StreamLogsRequest> requests;
  std::vector<std::pair<uint64_t, uint64_t>> ranges_read;  // (offset, length) the reader was given
  std::string written;
  std::vector<std::string> notes;

  LogStreamSeams Seams(bool with_reader) {
    LogStreamSeams seams;
    seams.stream = [this](const v1::StreamLogsRequest& request, const LogStreamSeams::ChunkSink& sink) {
      requests.push_back(request);
      size_t sent = 0;
      for (uint64_t at = request.from_offset(); at < file.size(); at += range_bytes) {
        if (requests.size() == 1 && first_call_drops_after && sent++ == *first_call_drops_after) {
          return Unavailable("socket closed");
        }
        const uint64_t length = std::min<uint64_t>(range_bytes, file.size() - at);
        v1::LogChunk chunk;
        chunk.set_offset(at);
        if (request.local_boot_id().empty() && !ranges_unasked) {
          chunk.set_data(file.substr(at, length));
        } else {
          v1::LocalLogRange& range = *chunk.mutable_local();
          range.set_path(kHostLog);
          range.set_device(2049);
          range.set_inode(131);
          range.set_length(length);
        }
        if (!sink(chunk)) return Status::Ok();
      }
      return Status::Ok();
    };
    seams.probe = [] { return Status::Ok(); };
    seams.sleep = [](std::chrono::milliseconds) {};
    seams.now = [] { return std::chrono::steady_clock::time_point{}; };
    if (!with_reader) return seams;
    seams.read_local = [this](const v1::LocalLogRange& range, uint64_t offset, const LogStreamSeams::PieceSink& sink) {
      EXPECT_EQ(range.path(), kHostLog);
      EXPECT_EQ(range.inode(), 131u);
      ranges_read.emplace_back(offset, range.length());
      const uint64_t end = offset + range.length();
      for (uint64_t at = offset; at < end;) {
        if (unreadable_from && at >= *unreadable_from) return FailedPrecondition(range.path() + ": not readable here");
        uint64_t piece = std::min<uint64_t>(2, end - at);
        if (unreadable_from && *unreadable_from > at) piece = std::min(piece, *unreadable_from - at);
        if (!sink(at, std::string_view(file).substr(at, piece))) return Status::Ok();
        at += piece;
      }
      return Status::Ok();
    };
    return seams;
  }

  Status Run(LogStreamOptions options, bool with_reader, size_t stop_after_bytes = SIZE_MAX) {
    options.request.set_local_boot_id("3f1c9a52-0d5e-4b7a-9c11-2f6f0e8d7a10");
    return StreamLogResuming(
        options, Seams(with_reader),
        [&](std::string_view bytes) {
          written += bytes;
          return written.size() < stop_after_bytes;
        },
        [&](const std::string& line) { notes.push_back(line); });
  }
};

LogStreamOptions LogsOf(std::string name) {
  LogStreamOptions options;
  options.request.set_name(std::move(name));
  return options;
}

const std::string kLog = "step 1\nstep 2\nstep 3 | loss 2.5\n";

TEST(LocalLogFollow, NamedRangesAreReadHereAndWrittenOnce) {
  HostAgent agent(kLog);
  ASSERT_TRUE(agent.Run(LogsOf("job"), true).ok());
  EXPECT_EQ(agent.written, kLog);
  ASSERT_EQ(agent.requests.size(), 1u);
  EXPECT_FALSE(agent.requests[0].local_boot_id().empty());
  ASSERT_EQ(agent.ranges_read.size(), (kLog.size() + 3) / 4);
  EXPECT_EQ(agent.ranges_read.front(), (std::pair<uint64_t, uint64_t>(0, 4)));
  EXPECT_TRUE(agent.notes.empty());
}

// Read here up to byte N (at a range's start, mid-range, at the last byte):
// the agent is asked again from byte N without the offer and sends the rest
// itself.
TEST(LocalLogFollow, WhereARangeCannotBeReadTheAgentSendsTheRestFromTheNextByte) {
  for (uint64_t unreadable : {uint64_t{0}, uint64_t{5}, uint64_t{6}, uint64_t{kLog.size() - 1}}) {
    HostAgent agent(kLog, unreadable);
    Status s = agent.Run(LogsOf("job"), true);
    ASSERT_TRUE(s.ok()) << s.ToString();
    EXPECT_EQ(agent.written, kLog) << "unreadable from " << unreadable;
    ASSERT_EQ(agent.requests.size(), 2u) << "unreadable from " << unreadable;
    EXPECT_EQ(agent.requests[1].from_offset(), unreadable);
    EXPECT_TRUE(agent.requests[1].local_boot_id().empty()) << "asked for ranges it cannot read";
    EXPECT_TRUE(agent.notes.empty()) << agent.notes.front();
  }
}

// Nothing anchored yet (--tail): the retry still asks for the tail.
TEST(LocalLogFollow, ATailRetriedBeforeAnyByteIsStillATail) {
  HostAgent agent(kLog, 0);
  LogStreamOptions options = LogsOf("job");
  options.request.set_tail_lines(2);
  ASSERT_TRUE(agent.Run(options, true).ok());
  ASSERT_EQ(agent.requests.size(), 2u);
  EXPECT_TRUE(agent.requests[1].has_tail_lines());
  EXPECT_EQ(agent.requests[1].tail_lines(), 2u);
  EXPECT_TRUE(agent.requests[1].local_boot_id().empty());
}

TEST(LocalLogFollow, AReconnectKeepsTheOfferAndResumesAtTheNextByte) {
  HostAgent agent(kLog);
  agent.first_call_drops_after = 2;
  LogStreamOptions options = LogsOf("job");
  options.request.set_follow(true);
  options.reconnect = true;
  ASSERT_TRUE(agent.Run(options, true).ok());
  EXPECT_EQ(agent.written, kLog);
  ASSERT_EQ(agent.requests.size(), 2u);
  EXPECT_EQ(agent.requests[1].from_offset(), 8u);
  EXPECT_FALSE(agent.requests[1].local_boot_id().empty());
  ASSERT_EQ(agent.notes.size(), 1u);  // "lost the agent ..., reconnecting"
}

// An agent that names ranges it was not offered to (a bug, or a hostile one)
// ends the copy with an error: not skipped bytes, not a loop of retries.
TEST(LocalLogFollow, ARangeNotAskedForEndsItWithAnError) {
  for (bool with_reader : {false, true}) {
    HostAgent agent(kLog, 0);  // nothing is readable here
    agent.ranges_unasked = true;
    Status s = agent.Run(LogsOf("job"), with_reader);
    EXPECT_EQ(s.code(), ErrorCode::kInternal) << s.ToString();
    EXPECT_NE(s.message().find("not asked"), std::string::npos) << s.message();
    EXPECT_EQ(agent.requests.size(), with_reader ? 2u : 1u);
    EXPECT_EQ(agent.written, "");
  }
}

TEST(LocalLogFollow, WithoutAReaderNoneIsOffered) {
  HostAgent agent(kLog);
  ASSERT_TRUE(agent.Run(LogsOf("job"), false).ok());
  EXPECT_EQ(agent.written, kLog);
  ASSERT_EQ(agent.requests.size(), 1u);
  EXPECT_TRUE(agent.requests[0].local_boot_id().empty());
}

TEST(LocalLogFollow, AClosedStdoutStopsALocalReadQuietly) {
  HostAgent agent(kLog);
  ASSERT_TRUE(agent.Run(LogsOf("job"), true, 5).ok());
  EXPECT_EQ(agent.written, kLog.substr(0, 6));  // pieces of 2: the one past byte 5 ends it
  EXPECT_EQ(agent.requests.size(), 1u) << "a closed stdout is not a reason to ask again";
}

}  // namespace
}  // namespace gpuctl::client
