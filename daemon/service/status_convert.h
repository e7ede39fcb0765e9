// gpuctl Status <-> grpc::Status, so handlers stay free of gRPC.
#pragma once

#include <grpcpp/support/status.h>

#include "common/status.h"

namespace gpuctl::daemon {

grpc::Status ToGrpcStatus(const Status& status);

}  // namespace gpuctl::daemon
