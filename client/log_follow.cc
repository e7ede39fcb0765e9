#include "client/log_follow.h"

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

v1::StreamLogsRequest ResumeRequest(const v1::StreamLogsRequest& original, const LogOffsetTracker& tracker) {
  v1::StreamLogsRequest request = original;
  if (tracker.next_offset()) {
    request.set_from_offset(*tracker.next_offset());
    request.clear_tail_lines();  // a tail_lines of 0 would mean "from the end"
  }
  return request;
}

}  // namespace gpuctl::client
