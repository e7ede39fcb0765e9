// Provisioning on the wire: ProvisionRequest -> ProvisionOptions, step
// reports and the run's result -> ProvisionEvent.
#pragma once

#include "agents/provision/provision_events.h"
#include "agents/provision/provision_options.h"
#include "gpuctl/v1/provision.pb.h"

namespace gpuctl::daemon {

provision::ProvisionOptions FromProto(const v1::ProvisionRequest& request);
v1::ProvisionEvent ToProtoEvent(const provision::StepReport& report);
v1::ProvisionEvent ToProtoEvent(const provision::ProvisionResult& result);

}  // namespace gpuctl::daemon
