#include "client/resuming_log_stream.h"

#include <optional>

#include "client/log_follow.h"
#include "common/units.h"

namespace gpuctl::client {

Status StreamLogResuming(const LogStreamOptions& options, const LogStreamSeams& seams,
                         const std::function<bool(std::string_view)>& write,
                         const std::function<void(const std::string&)>& note) {
  const v1::StreamLogsRequest& original = options.request;
  // A --tail start is chosen by the agent; any other starts where asked.
  std::optional<uint64_t> start;
  if (original.from_offset() > 0 || !original.has_tail_lines()) start = original.from_offset();
  LogOffsetTracker tracker(start);
  bool stopped_by_writer = false;
  auto on_chunk = [&](const v1::LogChunk& chunk) {
    if (chunk.truncated()) {
      // stdout stays the log's bytes: the cut is said on stderr.
      std::optional<uint64_t> was = tracker.StartOver(chunk.offset());
      note("gpuctl: output.log of " + original.name() + " was truncated" +
           (was ? " (it is shorter than the " + std::to_string(*was) + " bytes written so far)" : std::string()) +
           ", e.g. by logrotate's copytruncate; following it from its new start");
    }
    LogOffsetTracker::Accepted accepted = tracker.Accept(chunk.offset(), chunk.data());
    if (accepted.gap_bytes > 0) {
      note("gpuctl: warning: " + std::to_string(accepted.gap_bytes) + " bytes of the log at offset " +
           std::to_string(chunk.offset() - accepted.gap_bytes) + " were never received");
    }
    if (!accepted.bytes.empty() && !write(accepted.bytes)) {
      stopped_by_writer = true;
      return false;
    }
    return true;
  };

  if (options.reconnect) {
    if (Status s = seams.probe(); !s.ok()) return s;
  }
  std::optional<std::chrono::steady_clock::time_point> lost_since;
  while (true) {
    Status s = seams.stream(ResumeRequest(original, tracker), on_chunk);
    if (stopped_by_writer || s.ok()) return Status::Ok();
    if (!options.reconnect || s.code() != ErrorCode::kUnavailable) return s;
    if (!lost_since) {
      lost_since = seams.now();
      note("gpuctl: lost the agent at " + options.agent_address + ", reconnecting...");
    }
    // Wait until the agent answers again; a stream opened then resumes.
    while (lost_since) {
      if (seams.now() - *lost_since >= options.give_up_after) {
        std::string resume = tracker.next_offset()
                                 ? " --from-offset " + std::to_string(*tracker.next_offset())
                                 : std::string();
        return Unavailable("lost the agent at " + options.agent_address + " and could not reconnect within " +
                           FormatDuration(options.give_up_after) + "; once it is back, continue with: " +
                           "gpuctl train logs -f " + original.name() + resume);
      }
      seams.sleep(options.retry_every);
      Status probe = seams.probe();
      if (probe.ok()) lost_since.reset();
      else if (probe.code() != ErrorCode::kUnavailable) return probe;
    }
  }
}

}  // namespace gpuctl::client
