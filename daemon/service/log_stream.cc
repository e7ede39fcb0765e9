#include "daemon/service/log_stream.h"

#include <string>

#include "agents/sys/self_protection.h"
#include "daemon/service/status_convert.h"

namespace gpuctl::daemon {

bool LogStreamSlots::TryTake() {
  size_t open = open_.load();
  while (open < max_open_) {
    if (open_.compare_exchange_weak(open, open + 1)) return true;
  }
  return false;
}

void LogStreamSlots::Give() {
  if (open_.fetch_sub(1) == 1) sys::ReturnFreedMemory();
}

LogStreamReactor::LogStreamReactor(train::JobSupervisor& jobs, sys::FileWatchHub& hub, LogStreamSlots& slots,
                                   train::LogFollowOptions options)
    : hub_(hub), slots_(slots) {
  std::unique_lock lock(mutex_);
  has_slot_ = slots_.TryTake();
  if (!has_slot_) {
    FinishLocked(lock, grpc::Status(grpc::StatusCode::RESOURCE_EXHAUSTED,
                                    "gpuctld has " + std::to_string(slots_.max_open()) +
                                        " log streams open, its limit; close some 'gpuctl train logs -f' "
                                        "or raise gpuctld --max-log-streams"));
    return;
  }
  Result<train::LogFollower> follower = train::LogFollower::Open(jobs, std::move(options));
  if (!follower.ok()) {
    FinishLocked(lock, ToGrpcStatus(follower.status()));
    return;
  }
  follower_.emplace(std::move(follower).value());
  lock.unlock();
  Pump();
}

void LogStreamReactor::FinishLocked(std::unique_lock<std::mutex>& lock, const grpc::Status& status) {
  finished_ = true;
  lock.unlock();
  Finish(status);
}

void LogStreamReactor::Pump() {
  std::unique_lock lock(mutex_);
  if (done_ || finished_ || writing_) return;
  ticket_ = 0;
  Result<train::LogStep> step = follower_->Next();
  if (!step.ok()) return FinishLocked(lock, ToGrpcStatus(step.status()));
  switch (step->kind) {
    case train::LogStep::Kind::kData:
      in_flight_.set_offset(step->offset);
      in_flight_.set_data(std::move(step->data));
      writing_ = true;
      lock.unlock();
      StartWrite(&in_flight_);
      return;
    case train::LogStep::Kind::kDone:
      return FinishLocked(lock, grpc::Status::OK);
    case train::LogStep::Kind::kWait:
      // The wakeup runs on the hub's thread and only pumps again; OnDone
      // cancels it before `this` goes away.
      ticket_ = hub_.WaitOnce(follower_->path(), [this] { Pump(); });
      return;
  }
}

void LogStreamReactor::OnWriteDone(bool ok) {
  {
    std::lock_guard lock(mutex_);
    writing_ = false;
    in_flight_ = v1::LogChunk();  // give the chunk's memory back now, not at the next write
    if (!ok) return;              // the client went away; OnCancel and OnDone follow
  }
  Pump();
}

void LogStreamReactor::OnCancel() {
  std::unique_lock lock(mutex_);
  if (finished_ || writing_) return;  // a write in flight fails, and OnDone follows
  FinishLocked(lock, grpc::Status::CANCELLED);
}

void LogStreamReactor::OnDone() {
  uint64_t ticket = 0;
  {
    std::lock_guard lock(mutex_);
    done_ = true;
    ticket = ticket_;
  }
  // A wakeup that already began has either registered `ticket` (cancelled
  // here) or will see done_; Cancel waits out one that is running, and the
  // lock below one that is still inside Pump.
  if (ticket != 0) hub_.Cancel(ticket);
  { std::lock_guard lock(mutex_); }
  if (has_slot_) slots_.Give();
  delete this;
}

}  // namespace gpuctl::daemon
