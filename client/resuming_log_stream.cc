#include "client/resuming_log_stream.h"

#include <optional>

#include "client/log_follow.h"
#include "common/units.h"

namespace gpuctl::client {

Status StreamLogResuming(const LogStreamOptions& options, const LogStreamSeams& seams,
                         const std::function<bool(std::string_view)>& write,
                         const std::function<void(const std::string&)>& note) {
  v1::StreamLogsRequest original = options.request;
  if (!seams.read_local) original.clear_local_boot_id();
  bool local_failed = false;  // a named range could not be read here
  std::optional<Status> refused;  // the agent sent what was not asked for
  // A --tail start is chosen by the agent; any other starts where asked.
  std::optional<uint64_t> start;
  if (original.from_offset() > 0 || !original.has_tail_lines()) start = original.from_offset();
  LogOffsetTracker tracker(start);
  bool stopped_by_writer = false;
  bool at_line_start = true;  // the last byte written ended a line (or none was)
  bool queued_said = false;
  auto write_tracked = [&](std::string_view bytes) {
    if (bytes.empty()) return true;
    at_line_start = bytes.back() == '\n';
    if (write(bytes)) return true;
    stopped_by_writer = true;
    return false;
  };
  auto write_accepted = [&](uint64_t offset, std::string_view bytes) {
    LogOffsetTracker::Accepted accepted = tracker.Accept(offset, bytes);
    if (accepted.gap_bytes > 0) {
      note("gpuctl: warning: " + std::to_string(accepted.gap_bytes) + " bytes of the log at offset " +
           std::to_string(offset - accepted.gap_bytes) + " were never received");
    }
    return write_tracked(accepted.bytes);
  };
  auto on_chunk = [&](const v1::LogChunk& chunk) {
    if (chunk.queued() && !queued_said) {
      queued_said = true;
      note("gpuctl: " + original.name() + " is queued (waiting for " + chunk.waiting_for() + ")" +
           (original.follow() ? "; following it once it starts" : ": nothing is written yet"));
    }
    if (chunk.attempt_start() && tracker.EnterAttempt(chunk.attempt(), chunk.offset())) {
      // stdout is the logs and the lines between them, a separator on a line of its own.
      if (!write_tracked((at_line_start ? "" : "\n") + AttemptSeparator(chunk))) return false;
    }
    if (chunk.truncated()) {
      // stdout stays the log's bytes: the cut is said on stderr.
      std::optional<uint64_t> was = tracker.StartOver(chunk.offset());
      note("gpuctl: output.log of " + original.name() + " was truncated" +
           (was ? " (it is shorter than the " + std::to_string(*was) + " bytes written so far)" : std::string()) +
           ", e.g. by logrotate's copytruncate; following it from its new start");
    }
    if (chunk.has_local()) {
      if (original.local_boot_id().empty()) {
        // Never offered, or withdrawn after a failed read: asking again would
        // only be answered alike.
        refused = Internal("the agent named a range of the log instead of sending it, though not asked to");
        return false;
      }
      Status read = seams.read_local(chunk.local(), chunk.offset(), write_accepted);
      if (!read.ok() && !stopped_by_writer) local_failed = true;
      return read.ok() && !stopped_by_writer;
    }
    return write_accepted(chunk.offset(), chunk.data());
  };

  if (options.reconnect) {
    if (Status s = seams.probe(); !s.ok()) return s;
  }
  std::optional<std::chrono::steady_clock::time_point> lost_since;
  while (true) {
    Status s = seams.stream(ResumeRequest(original, tracker), on_chunk);
    if (stopped_by_writer) return Status::Ok();
    if (refused) return *refused;
    if (local_failed) {
      // Not readable here after all: the agent sends the rest itself.
      local_failed = false;
      original.clear_local_boot_id();
      continue;
    }
    if (s.ok()) return Status::Ok();
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
        // The offset is in that attempt's log: a relaunch meanwhile starts another.
        if (tracker.attempt()) resume = " --attempt " + std::to_string(*tracker.attempt()) + resume;
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
