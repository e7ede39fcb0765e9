// Translates the plain health model to the wire. The only place that knows
// both sides.
#pragma once

#include "agents/health/health_snapshot.h"
#include "gpuctl/v1/health.pb.h"

namespace gpuctl::daemon {

void ToProto(const health::HealthSnapshot& in, v1::HealthSnapshot& out);

}  // namespace gpuctl::daemon
