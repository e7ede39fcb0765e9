#include "common/status.h"

#include <cerrno>
#include <cstring>

namespace gpuctl {

const char* ErrorCodeName(ErrorCode code) {
  switch (code) {
    case ErrorCode::kOk: return "OK";
    case ErrorCode::kInvalidArgument: return "INVALID_ARGUMENT";
    case ErrorCode::kNotFound: return "NOT_FOUND";
    case ErrorCode::kAlreadyExists: return "ALREADY_EXISTS";
    case ErrorCode::kPermissionDenied: return "PERMISSION_DENIED";
    case ErrorCode::kFailedPrecondition: return "FAILED_PRECONDITION";
    case ErrorCode::kUnavailable: return "UNAVAILABLE";
    case ErrorCode::kIo: return "IO";
    case ErrorCode::kInternal: return "INTERNAL";
  }
  return "UNKNOWN";
}

Status::Status(ErrorCode code, std::string message, std::source_location where)
    : code_(code), message_(std::move(message)), file_(where.file_name()), line_(where.line()) {}

std::string Status::where() const {
  if (ok()) return "";
  const char* base = std::strrchr(file_, '/');
  return std::string(base ? base + 1 : file_) + ":" + std::to_string(line_);
}

std::string Status::ToString() const {
  if (ok()) return "OK";
  return std::string(ErrorCodeName(code_)) + ": " + message_ + " (" + where() + ")";
}

Status Status::Wrap(const std::string& context) const {
  if (ok()) return *this;
  Status wrapped = *this;
  wrapped.message_ = context + ": " + message_;
  return wrapped;
}

Status InvalidArgument(std::string m, std::source_location w) { return {ErrorCode::kInvalidArgument, std::move(m), w}; }
Status NotFound(std::string m, std::source_location w) { return {ErrorCode::kNotFound, std::move(m), w}; }
Status FailedPrecondition(std::string m, std::source_location w) { return {ErrorCode::kFailedPrecondition, std::move(m), w}; }
Status Unavailable(std::string m, std::source_location w) { return {ErrorCode::kUnavailable, std::move(m), w}; }
Status IoError(std::string m, std::source_location w) { return {ErrorCode::kIo, std::move(m), w}; }
Status Internal(std::string m, std::source_location w) { return {ErrorCode::kInternal, std::move(m), w}; }

Status ErrnoError(const std::string& what, int err, std::source_location w) {
  ErrorCode code = ErrorCode::kIo;
  if (err == ENOENT) code = ErrorCode::kNotFound;
  if (err == EACCES || err == EPERM) code = ErrorCode::kPermissionDenied;
  if (err == EEXIST) code = ErrorCode::kAlreadyExists;
  return {code, what + ": " + std::strerror(err), w};
}

}  // namespace gpuctl
