#include "daemon/service/event_stream.h"

#include <iterator>
#include <vector>

#include "daemon/service/event_convert.h"

namespace gpuctl::daemon {

EventStreamReactor::EventStreamReactor(events::EventLog& log, uint64_t after_seq, bool follow) : log_(log) {
  std::unique_lock lock(mutex_);
  if (follow) {
    // The wakeup runs on the publisher's thread: it starts a write at most.
    subscription_ = log_.Subscribe(after_seq, [this] {
      std::unique_lock wake_lock(mutex_);
      PumpLocked(wake_lock);
    });
  } else {
    std::vector<events::AgentEvent> backlog = log_.Since(after_seq);
    backlog_.assign(std::make_move_iterator(backlog.begin()), std::make_move_iterator(backlog.end()));
  }
  PumpLocked(lock);
}

// Writes the next event, or finishes when there is none and none will come.
// gRPC calls are made after unlocking.
void EventStreamReactor::PumpLocked(std::unique_lock<std::mutex>& lock) {
  if (writing_ || finished_) return;
  if (!finish_status_) {
    std::optional<events::AgentEvent> next;
    if (subscription_) {
      next = subscription_->Next();
    } else if (!backlog_.empty()) {
      next = std::move(backlog_.front());
      backlog_.pop_front();
    }
    if (next) {
      in_flight_.Clear();
      ToProto(*next, in_flight_);
      writing_ = true;
      lock.unlock();
      StartWrite(&in_flight_);
      return;
    }
    if (!subscription_) {
      finish_status_ = grpc::Status::OK;
    } else if (subscription_->ended()) {
      finish_status_ = grpc::Status(grpc::StatusCode::UNAVAILABLE, "gpuctld is shutting down");
    } else {
      return;  // the log wakes us when the next event is published
    }
  }
  finished_ = true;
  grpc::Status status = *finish_status_;
  lock.unlock();
  Finish(status);
}

void EventStreamReactor::OnWriteDone(bool ok) {
  std::unique_lock lock(mutex_);
  writing_ = false;
  if (!ok && !finish_status_) {
    // The client went away; OnCancel follows.
    finish_status_ = grpc::Status(grpc::StatusCode::CANCELLED, "stream closed by client");
  }
  PumpLocked(lock);
}

void EventStreamReactor::OnCancel() {
  {
    std::lock_guard lock(mutex_);
    if (!finish_status_) finish_status_ = grpc::Status::CANCELLED;
    backlog_.clear();
  }
  // Not under mutex_: Unsubscribe waits out a running wakeup, which takes it.
  log_.Unsubscribe(subscription_);
  std::unique_lock lock(mutex_);
  PumpLocked(lock);
}

void EventStreamReactor::OnDone() {
  // After this the log never calls the wakeup (and so `this`) again.
  log_.Unsubscribe(subscription_);
  delete this;
}

}  // namespace gpuctl::daemon
