// Provision: the run happens on a thread of its own (installs take minutes)
// and hands its events to this reactor through a queue; gRPC threads never
// block. A run has few events (a handful per step), so the queue needs no
// bound. A client that goes away cancels the run before its next action; the
// command in flight finishes (killing dpkg halfway is worse), which is why
// the thread is detached and shares only `Shared` with the reactor.
#pragma once

#include <atomic>
#include <deque>
#include <memory>
#include <mutex>
#include <optional>

#include <grpcpp/grpcpp.h>

#include "agents/provision/provisioner.h"
#include "gpuctl/v1/provision.pb.h"

namespace gpuctl::daemon {

class ProvisionStreamReactor final : public grpc::ServerWriteReactor<v1::ProvisionEvent> {
 public:
  ProvisionStreamReactor(provision::Provisioner& provisioner, provision::ProvisionOptions options);

  void OnWriteDone(bool ok) override;
  void OnCancel() override;
  void OnDone() override;

 private:
  struct Shared {
    std::mutex mutex;
    std::deque<v1::ProvisionEvent> queue;
    v1::ProvisionEvent in_flight;
    bool writing = false;
    bool finished = false;  // Finish was called: no more writes
    std::optional<grpc::Status> finish_status;
    std::atomic<bool> cancel{false};
    ProvisionStreamReactor* reactor = nullptr;  // valid until Finish
  };

  static void Push(const std::shared_ptr<Shared>& shared, v1::ProvisionEvent event);
  static void Close(const std::shared_ptr<Shared>& shared, grpc::Status status);
  static void StartNextLocked(Shared& shared, std::unique_lock<std::mutex>& lock);

  std::shared_ptr<Shared> shared_;
};

}  // namespace gpuctl::daemon
