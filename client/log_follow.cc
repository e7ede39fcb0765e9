#include "client/log_follow.h"

#include "common/utf8.h"

namespace gpuctl::client {

LogOffsetTracker::Accepted LogOffsetTracker::Accept(uint64_t offset, std::string_view data) {
  if (data.empty()) return {};
  if (!next_) next_ = offset;
  const uint64_t end = offset + data.size();
  if (end <= *next_) return {};  // all of it was written already
  Accepted accepted;
  if (offset < *next_) {
    data.remove_prefix(static_cast<size_t>(*next_ - offset));
  } else if (offset > *next_) {
    accepted.gap_bytes = offset - *next_;
  }
  accepted.bytes = data;
  next_ = end;
  return accepted;
}

std::optional<uint64_t> LogOffsetTracker::StartOver(uint64_t offset) {
  std::optional<uint64_t> was = next_;
  next_ = offset;
  return was;
}

bool LogOffsetTracker::EnterAttempt(uint32_t attempt, uint64_t offset) {
  if (!attempt_) {
    attempt_ = attempt;
    if (!next_) next_ = offset;  // --tail: the agent chose where it starts
    return false;
  }
  if (*attempt_ == attempt) return false;
  attempt_ = attempt;
  next_ = offset;  // another file: its offsets start over
  return true;
}

std::string AttemptSeparator(const v1::LogChunk& chunk) {
  std::string line = "--- attempt " + std::to_string(chunk.attempt());
  if (!chunk.run_id().empty()) line += " (run " + EscapeForTerminal(chunk.run_id()) + ")";
  std::string changes;
  for (const std::string& change : chunk.changes()) {
    changes += (changes.empty() ? "" : ", ") + EscapeForTerminal(change);
  }
  if (!changes.empty()) line += ": " + changes;
  return line + " ---\n";
}

v1::StreamLogsRequest ResumeRequest(const v1::StreamLogsRequest& original, const LogOffsetTracker& tracker) {
  v1::StreamLogsRequest request = original;
  if (tracker.next_offset()) {
    request.set_from_offset(*tracker.next_offset());
    request.clear_tail_lines();  // a tail_lines of 0 would mean "from the end"
  }
  if (tracker.attempt()) request.set_attempt(*tracker.attempt());
  return request;
}

}  // namespace gpuctl::client
