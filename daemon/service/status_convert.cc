#include "daemon/service/status_convert.h"

namespace gpuctl::daemon {

grpc::Status ToGrpcStatus(const Status& status) {
  grpc::StatusCode code = grpc::StatusCode::UNKNOWN;
  switch (status.code()) {
    case ErrorCode::kOk: return grpc::Status::OK;
    case ErrorCode::kInvalidArgument: code = grpc::StatusCode::INVALID_ARGUMENT; break;
    case ErrorCode::kNotFound: code = grpc::StatusCode::NOT_FOUND; break;
    case ErrorCode::kAlreadyExists: code = grpc::StatusCode::ALREADY_EXISTS; break;
    case ErrorCode::kPermissionDenied: code = grpc::StatusCode::PERMISSION_DENIED; break;
    case ErrorCode::kFailedPrecondition: code = grpc::StatusCode::FAILED_PRECONDITION; break;
    case ErrorCode::kUnavailable: code = grpc::StatusCode::UNAVAILABLE; break;
    case ErrorCode::kIo: code = grpc::StatusCode::INTERNAL; break;
    case ErrorCode::kInternal: code = grpc::StatusCode::INTERNAL; break;
  }
  return grpc::Status(code, status.message());
}

}  // namespace gpuctl::daemon
