// WatchEvents: a reactor fed by an EventLog subscription. The ring in the
// log is the bounded queue: the reactor holds one event in flight and reads
// the next when that write is done, or when the log wakes it after a
// Publish. gRPC threads and publishers never block on a slow client; a
// client that falls a ring behind gets an "events_dropped" event instead.
#pragma once

#include <cstdint>
#include <deque>
#include <memory>
#include <mutex>
#include <optional>

#include <grpcpp/grpcpp.h>

#include "agents/events/event_log.h"
#include "gpuctl/v1/events.pb.h"

namespace gpuctl::daemon {

class EventStreamReactor final : public grpc::ServerWriteReactor<v1::AgentEvent> {
 public:
  // Sends the events after `after_seq` that the log still keeps; then, with
  // `follow`, each new one until the client cancels or the log ends its
  // subscriptions (shutdown: UNAVAILABLE); without, finishes OK.
  EventStreamReactor(events::EventLog& log, uint64_t after_seq, bool follow);

  void OnWriteDone(bool ok) override;
  void OnCancel() override;
  void OnDone() override;

 private:
  void PumpLocked(std::unique_lock<std::mutex>& lock);

  events::EventLog& log_;
  std::mutex mutex_;
  std::deque<events::AgentEvent> backlog_;                    // without follow
  std::shared_ptr<events::EventSubscription> subscription_;  // with follow; set once
  v1::AgentEvent in_flight_;
  bool writing_ = false;
  bool finished_ = false;
  std::optional<grpc::Status> finish_status_;
};

}  // namespace gpuctl::daemon
