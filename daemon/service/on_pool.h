// Unary calls that may block (a job's start or stop, a drain's fsync) run
// on a work pool, never on a gRPC thread.
#pragma once

#include <utility>

#include <grpcpp/grpcpp.h>

#include "daemon/service/work_queue.h"

namespace gpuctl::daemon {

// Runs `work` on `pool`, or finishes at once when the pool is full.
template <typename Work>
grpc::ServerUnaryReactor* OnPool(grpc::CallbackServerContext* context, WorkQueue& pool, Work work) {
  grpc::ServerUnaryReactor* reactor = context->DefaultReactor();
  if (!pool.Post([reactor, work = std::move(work)]() mutable { work(reactor); })) {
    reactor->Finish(grpc::Status(grpc::StatusCode::RESOURCE_EXHAUSTED,
                                 "too many job starts, stops and removals in progress; retry shortly"));
  }
  return reactor;
}

}  // namespace gpuctl::daemon
