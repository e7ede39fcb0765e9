// WatchEvents: a stream fed by an EventLog subscription. The ring in the
// log is the bounded queue: the stream holds one event in flight and reads
// the next when that write is done, or when the log wakes it after a
// Publish. gRPC threads and publishers never block on a slow client; a
// client that falls a ring behind gets an "events_dropped" event instead.
#pragma once

#include <cstdint>
#include <deque>
#include <memory>
#include <optional>

#include "agents/events/event_log.h"
#include "daemon/service/stream_writer.h"
#include "gpuctl/v1/events.pb.h"

namespace gpuctl::daemon {

class EventStreamReactor final : public StreamWriter<v1::AgentEvent> {
 public:
  // Sends the events after `after_seq` that the log still keeps; then, with
  // `follow`, each new one until the client cancels or the log ends its
  // subscriptions (shutdown: UNAVAILABLE); without, finishes OK. With
  // `streams`, shutdown ends it. An `after_seq` past the newest event (but
  // UINT64_MAX, "send nothing") is refused (INVALID_ARGUMENT): those numbers
  // are not used yet, and a follower would silently skip the events up to it.
  EventStreamReactor(events::EventLog& log, uint64_t after_seq, bool follow, OpenStreams* streams = nullptr);

 private:
  Next Produce(v1::AgentEvent& out, grpc::Status& end) override;
  void Release() override;

  events::EventLog& log_;
  std::deque<events::AgentEvent> backlog_;                    // without follow
  std::shared_ptr<events::EventSubscription> subscription_;  // with follow; set once, before Start
  std::optional<grpc::Status> refused_;                       // why it ends before its first event
};

}  // namespace gpuctl::daemon
