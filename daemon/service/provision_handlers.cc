// The Agent service's provisioning RPC: a stream fed by the Provisioner.
#include "daemon/service/agent_service.h"
#include "daemon/service/provision_convert.h"
#include "daemon/service/provision_stream.h"

namespace gpuctl::daemon {

// A stream that ends at once with `status`.
class RefusedProvisionStream final : public grpc::ServerWriteReactor<v1::ProvisionEvent> {
 public:
  explicit RefusedProvisionStream(const grpc::Status& status) { Finish(status); }
  void OnDone() override { delete this; }
};

grpc::ServerWriteReactor<v1::ProvisionEvent>* AgentService::Provision(grpc::CallbackServerContext* /*context*/,
                                                                      const v1::ProvisionRequest* request) {
  if (provisioner_ == nullptr) {
    return new RefusedProvisionStream(
        grpc::Status(grpc::StatusCode::UNIMPLEMENTED, "this agent was started without provisioning"));
  }
  return new ProvisionStreamReactor(*provisioner_, FromProto(*request), &streams_);
}

}  // namespace gpuctl::daemon
