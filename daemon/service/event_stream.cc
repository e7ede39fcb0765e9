#include "daemon/service/event_stream.h"

#include <iterator>
#include <limits>
#include <string>
#include <optional>
#include <vector>

#include "daemon/service/event_convert.h"

namespace gpuctl::daemon {

EventStreamReactor::EventStreamReactor(events::EventLog& log, uint64_t after_seq, bool follow,
                                       OpenStreams* streams)
    : StreamWriter(streams), log_(log) {
  const uint64_t newest = log_.last_seq();
  if (after_seq > newest && after_seq != std::numeric_limits<uint64_t>::max()) {
    refused_ = grpc::Status(grpc::StatusCode::INVALID_ARGUMENT,
                            "--after " + std::to_string(after_seq) + " is past the newest event (" +
                                std::to_string(newest) + "); event numbers rise across agent restarts, so give one "
                                "that `gpuctl events` showed");
  } else if (follow) {
    // The wakeup runs on the publisher's thread: it starts a write at most.
    // One before Start does nothing; Start reads what it announced.
    subscription_ = log_.Subscribe(after_seq, [this] { Wake(); });
  } else {
    std::vector<events::AgentEvent> backlog = log_.Since(after_seq);
    backlog_.assign(std::make_move_iterator(backlog.begin()), std::make_move_iterator(backlog.end()));
  }
  Start();
}

auto EventStreamReactor::Produce(v1::AgentEvent& out, grpc::Status& end) -> Next {
  if (refused_) {
    end = *refused_;
    return Next::kEnd;
  }
  std::optional<events::AgentEvent> next;
  if (subscription_) {
    next = subscription_->Next();
  } else if (!backlog_.empty()) {
    next = std::move(backlog_.front());
    backlog_.pop_front();
  }
  if (next) {
    ToProto(*next, out);
    return Next::kWrite;
  }
  if (!subscription_) {
    end = grpc::Status::OK;
    return Next::kEnd;
  }
  if (subscription_->ended()) {
    end = grpc::Status(grpc::StatusCode::UNAVAILABLE, "gpuctld is shutting down");
    return Next::kEnd;
  }
  return Next::kIdle;  // the log wakes us when the next event is published
}

void EventStreamReactor::Release() {
  // After this the log never calls the wakeup (and so `this`) again.
  if (subscription_) log_.Unsubscribe(subscription_);
}

}  // namespace gpuctl::daemon
