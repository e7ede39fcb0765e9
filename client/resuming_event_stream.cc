#include "client/resuming_event_stream.h"

#include <algorithm>
#include <optional>
#include <string>

#include "common/units.h"

namespace gpuctl::client {

Status WatchEventsResuming(const EventStreamOptions& options, const EventStreamSeams& seams,
                           const std::function<bool(const v1::AgentEvent&)>& write,
                           const std::function<void(const std::string&)>& note) {
  bool stopped_by_writer = false;
  uint64_t last_seq = options.request.after_seq();  // the newest event written (or asked to skip)
  auto on_event = [&](const v1::AgentEvent& event) {
    // seq 0 is an events_dropped made for this stream, numbered by nothing.
    last_seq = std::max(last_seq, event.seq());
    if (write(event)) return true;
    stopped_by_writer = true;
    return false;
  };

  if (options.reconnect) {
    if (Status s = seams.probe(); s.code() == ErrorCode::kUnavailable) return s;
  }
  v1::WatchEventsRequest request = options.request;
  while (true) {
    Status s = seams.stream(request, on_event);
    if (stopped_by_writer || s.ok()) return Status::Ok();
    if (!options.reconnect || s.code() != ErrorCode::kUnavailable) return s;
    note("gpuctl: lost the agent at " + options.agent_address + ", reconnecting...");
    const std::chrono::steady_clock::time_point lost_since = seams.now();
    while (true) {
      if (seams.now() - lost_since >= options.give_up_after) {
        return Unavailable("lost the agent at " + options.agent_address + " and could not reconnect within " +
                           FormatDuration(options.give_up_after) + "; once it is back, continue with: gpuctl events -f");
      }
      seams.sleep(options.retry_every);
      if (seams.probe().code() != ErrorCode::kUnavailable) break;
    }
    // Whether the agent restarted or only the connection dropped, its events
    // kept their numbers (they are journaled in STATE_DIR/events, and seq
    // goes on rising across restarts): go on after the last one written,
    // so none is shown twice and those made meanwhile are not missed.
    request.set_after_seq(last_seq);
    note("gpuctl: reconnected to " + options.agent_address + "; going on after event " + std::to_string(last_seq));
  }
}

}  // namespace gpuctl::client
