#include "daemon/service/provision_stream.h"

#include <thread>

#include "daemon/service/provision_convert.h"
#include "daemon/service/status_convert.h"

namespace gpuctl::daemon {

ProvisionStreamReactor::ProvisionStreamReactor(provision::Provisioner& provisioner,
                                               provision::ProvisionOptions options)
    : shared_(std::make_shared<Shared>()) {
  shared_->reactor = this;
  std::thread([shared = shared_, &provisioner, options = std::move(options)] {
    auto result = provisioner.Run(
        options, [&shared](const provision::StepReport& report) { Push(shared, ToProtoEvent(report)); },
        &shared->cancel);
    if (!result.ok()) {
      Close(shared, ToGrpcStatus(result.status()));
      return;
    }
    Push(shared, ToProtoEvent(*result));
    Close(shared, grpc::Status::OK);
  }).detach();
}

void ProvisionStreamReactor::Push(const std::shared_ptr<Shared>& shared, v1::ProvisionEvent event) {
  std::unique_lock lock(shared->mutex);
  if (shared->finished) return;
  shared->queue.push_back(std::move(event));
  StartNextLocked(*shared, lock);
}

void ProvisionStreamReactor::Close(const std::shared_ptr<Shared>& shared, grpc::Status status) {
  std::unique_lock lock(shared->mutex);
  if (!shared->finish_status) shared->finish_status = std::move(status);
  StartNextLocked(*shared, lock);
}

// Writes the next event, or finishes once the queue is drained and the run is
// over (or the client is gone). gRPC calls happen after unlocking.
void ProvisionStreamReactor::StartNextLocked(Shared& shared, std::unique_lock<std::mutex>& lock) {
  if (shared.writing || shared.finished) return;
  ProvisionStreamReactor* reactor = shared.reactor;
  if (!shared.queue.empty() && !shared.cancel) {
    shared.in_flight = std::move(shared.queue.front());
    shared.queue.pop_front();
    shared.writing = true;
    lock.unlock();
    reactor->StartWrite(&shared.in_flight);
    return;
  }
  if (shared.finish_status && (shared.queue.empty() || shared.cancel)) {
    shared.finished = true;
    grpc::Status status = shared.cancel ? grpc::Status::CANCELLED : *shared.finish_status;
    lock.unlock();
    reactor->Finish(status);
  }
}

void ProvisionStreamReactor::OnWriteDone(bool ok) {
  std::unique_lock lock(shared_->mutex);
  shared_->writing = false;
  if (!ok) {
    shared_->cancel = true;
    if (!shared_->finish_status) shared_->finish_status = grpc::Status::CANCELLED;
  }
  StartNextLocked(*shared_, lock);
}

void ProvisionStreamReactor::OnCancel() {
  std::unique_lock lock(shared_->mutex);
  shared_->cancel = true;
  if (!shared_->finish_status) shared_->finish_status = grpc::Status::CANCELLED;
  StartNextLocked(*shared_, lock);
}

void ProvisionStreamReactor::OnDone() {
  {
    std::lock_guard lock(shared_->mutex);
    shared_->reactor = nullptr;
    shared_->finished = true;
  }
  delete this;
}

}  // namespace gpuctl::daemon
