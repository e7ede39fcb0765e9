// `gpuctl events -f`: follow the agent's events and, when the agent goes
// away (restart, dropped connection), keep retrying and follow the new agent.
// Event numbers keep rising across agent restarts (the agent journals its
// events), so a reconnected stream goes on after the last event written,
// and the user is told.
#pragma once

#include <chrono>
#include <functional>
#include <string>

#include "common/status.h"
#include "gpuctl/v1/events.pb.h"

namespace gpuctl::client {

// What following needs from outside: the agent and the clock. Tests pass fakes.
struct EventStreamSeams {
  using EventSink = std::function<bool(const v1::AgentEvent&)>;
  // One WatchEvents call (AgentClient::WatchEvents): Ok at the end of the
  // stream or when the sink returned false.
  std::function<Status(const v1::WatchEventsRequest&, const EventSink&)> stream;
  // Does the agent answer? Only kUnavailable counts as "no".
  std::function<Status()> probe;
  std::function<void(std::chrono::milliseconds)> sleep;
  std::function<std::chrono::steady_clock::time_point()> now;
};

struct EventStreamOptions {
  v1::WatchEventsRequest request;
  // -f: reconnect after kUnavailable. Before the first stream the agent is
  // probed once, so an address with nobody there fails at once (exit 3).
  bool reconnect = false;
  std::string agent_address;  // for the notes
  std::chrono::milliseconds retry_every{500};
  std::chrono::milliseconds give_up_after{120'000};
};

// Hands each event to `write` (false: stop, e.g. stdout closed) and each line
// for stderr to `note`. Returns Ok when the stream ended or `write` stopped
// it; else the error, kUnavailable after give_up_after of failed reconnects.
Status WatchEventsResuming(const EventStreamOptions& options, const EventStreamSeams& seams,
                           const std::function<bool(const v1::AgentEvent&)>& write,
                           const std::function<void(const std::string&)>& note);

}  // namespace gpuctl::client
