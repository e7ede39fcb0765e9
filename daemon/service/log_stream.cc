#include "daemon/service/log_stream.h"

#include <string>

#include "agents/sys/self_protection.h"
#include "daemon/service/proto_text.h"
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
                                   train::LogFollowOptions options, OpenStreams* streams)
    : StreamWriter(streams), hub_(hub), slots_(slots) {
  has_slot_ = slots_.TryTake();
  if (!has_slot_) {
    refused_ = grpc::Status(grpc::StatusCode::RESOURCE_EXHAUSTED,
                            "gpuctld has " + std::to_string(slots_.max_open()) +
                                " log streams open, its limit; close some 'gpuctl train logs -f' "
                                "or raise gpuctld --max-log-streams");
  } else if (Result<train::LogFollower> follower = train::LogFollower::Open(jobs, std::move(options));
             !follower.ok()) {
    refused_ = ToGrpcStatus(follower.status());
  } else {
    follower_.emplace(std::move(follower).value());
  }
  Start();
}

auto LogStreamReactor::Produce(v1::LogChunk& out, grpc::Status& end) -> Next {
  if (refused_) {
    end = *refused_;
    return Next::kEnd;
  }
  if (ticket_ != 0) return Next::kIdle;  // the hub wakes us
  Result<train::LogStep> step = follower_->Next();
  if (!step.ok()) {
    end = ToGrpcStatus(step.status());
    return Next::kEnd;
  }
  switch (step->kind) {
    case train::LogStep::Kind::kData:
      out.set_offset(step->offset);
      out.set_data(std::move(step->data));
      if (step->local) {
        v1::LocalLogRange& local = *out.mutable_local();
        local.set_path(std::move(step->local->path));
        local.set_device(step->local->device);
        local.set_inode(step->local->inode);
        local.set_length(step->local->length);
      }
      out.set_truncated(step->truncated);
      if (step->attempt_start) {
        out.set_attempt_start(true);
        out.set_attempt(step->attempt_start->attempt);
        out.set_run_id(step->attempt_start->run_id);
        for (std::string& change : step->attempt_start->changes) out.add_changes(std::move(change));
      }
      if (step->queued_waiting_for) {
        out.set_queued(true);
        out.set_waiting_for(std::move(*step->queued_waiting_for));
      }
      // A change may name a checkpoint path, any bytes; a string field that
      // is not UTF-8 would fail the whole stream at the client.
      if (step->attempt_start || out.queued()) MakeStringsUtf8(out);
      return Next::kWrite;
    case train::LogStep::Kind::kDone:
      end = grpc::Status::OK;
      return Next::kEnd;
    case train::LogStep::Kind::kWait:
      break;
  }
  // The wakeup runs on the hub's thread and only reads again; Release
  // cancels it before `this` goes away.
  ticket_ = hub_.WaitOnce(follower_->path(), [this] { Update([this] { ticket_ = 0; }); });
  return Next::kIdle;
}

void LogStreamReactor::Release() {
  const uint64_t ticket = Locked([this] { return ticket_; });
  // Finished: no Produce runs again, so no new wait is made. Cancel waits
  // out a wakeup that is running now.
  if (ticket != 0) hub_.Cancel(ticket);
  if (has_slot_) slots_.Give();
}

}  // namespace gpuctl::daemon
