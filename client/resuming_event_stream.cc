#include "client/resuming_event_stream.h"

#include <optional>

#include "common/units.h"

namespace gpuctl::client {

Status WatchEventsResuming(const EventStreamOptions& options, const EventStreamSeams& seams,
                           const std::function<bool(const v1::AgentEvent&)>& write,
                           const std::function<void(const std::string&)>& note) {
  bool stopped_by_writer = false;
  auto on_event = [&](const v1::AgentEvent& event) {
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
    // Whether the agent restarted or only the connection dropped, the old
    // numbers cannot be trusted against it: start at its oldest kept event.
    request.set_after_seq(0);
    note("gpuctl: reconnected to " + options.agent_address +
         "; event numbers restart with each agent run, so showing this run's events from its oldest kept one");
  }
}

}  // namespace gpuctl::client
