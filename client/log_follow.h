// Resuming a job's log without losing or repeating a byte. Every LogChunk
// carries its offset in output.log; the tracker remembers the first byte not
// yet written and trims what a resumed stream sends again.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "gpuctl/v1/jobs.pb.h"

namespace gpuctl::client {

class LogOffsetTracker {
 public:
  // `start`: the offset the first chunk should begin at (--from-offset, or 0);
  // nullopt when the agent chooses it (--tail), then the first chunk sets it.
  explicit LogOffsetTracker(std::optional<uint64_t> start) : next_(start) {}

  struct Accepted {
    std::string_view bytes;  // the part of the chunk to write (a view into its data)
    uint64_t gap_bytes = 0;  // bytes skipped before it that were never received
  };
  // An overlap (offset below next_offset) drops the prefix already written; a
  // gap (above) is reported and the chunk still written. Empty chunks change
  // nothing.
  Accepted Accept(uint64_t offset, std::string_view data);

  // The log was cut (LogChunk.truncated): its content starts over at
  // `offset`, so what comes from there is new, not an overlap to trim.
  // Returns where the copy stood before (nullopt if nothing was written).
  std::optional<uint64_t> StartOver(uint64_t offset);

  // A chunk with attempt_start (the agent follows the job across
  // relaunches): the bytes from here are attempt `attempt`'s log, starting at
  // `offset`. True when that is a later attempt than the one written so far,
  // so a separator is due; the first attempt a stream reaches, or the one a
  // resumed stream is at again, is false.
  bool EnterAttempt(uint32_t attempt, uint64_t offset);

  // The first byte not yet written; nullopt before the first chunk with --tail.
  std::optional<uint64_t> next_offset() const { return next_; }
  // The attempt whose log is being written; nullopt until the agent said.
  std::optional<uint32_t> attempt() const { return attempt_; }

 private:
  std::optional<uint64_t> next_;
  std::optional<uint32_t> attempt_;
};

// The line written between two attempts' logs, e.g.
// "--- attempt 2 (run RUN): --max-anchors: 1024 -> 768 ---\n"; the agent's
// text in it is escaped.
std::string AttemptSeparator(const v1::LogChunk& chunk);

// The request that continues `original` after what `tracker` has written:
// from next_offset with no tail_lines, or `original` itself when nothing
// anchored the position yet (so --tail still applies); at the attempt being
// written, once known, so that a relaunch while away does not pass for the
// same log.
v1::StreamLogsRequest ResumeRequest(const v1::StreamLogsRequest& original, const LogOffsetTracker& tracker);

}  // namespace gpuctl::client
