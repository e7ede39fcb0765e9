// Provision: the run happens on a thread of its own (installs take minutes)
// and hands its events to this stream's queue; gRPC threads never block. A
// run has few events (a handful per step), so the queue needs no bound. A
// client that goes away cancels the run before its next action; the command
// in flight finishes (killing dpkg halfway is worse), which is why the thread
// is detached and keeps the stream's memory (Retain) until it is done, past
// the RPC's end if need be.
#pragma once

#include <atomic>
#include <deque>
#include <optional>

#include "agents/provision/provisioner.h"
#include "daemon/service/stream_writer.h"
#include "gpuctl/v1/provision.pb.h"

namespace gpuctl::daemon {

class ProvisionStreamReactor final : public StreamWriter<v1::ProvisionEvent> {
 public:
  // With `streams`, shutdown ends it (the run itself stops through
  // Provisioner::StopAndWait).
  ProvisionStreamReactor(provision::Provisioner& provisioner, provision::ProvisionOptions options,
                         OpenStreams* streams = nullptr);

 private:
  Next Produce(v1::ProvisionEvent& out, grpc::Status& end) override;
  void ClientGone() override { cancel_ = true; }

  // From the run's thread.
  void Push(v1::ProvisionEvent event);
  void Close(const grpc::Status& status);

  // Guarded by the stream's lock.
  std::deque<v1::ProvisionEvent> queue_;
  std::optional<grpc::Status> closed_;  // the run is over: finish with this once the queue is sent
  std::atomic<bool> cancel_{false};     // the client is gone: the run stops before its next action
};

}  // namespace gpuctl::daemon
