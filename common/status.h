// Errors as values. A Status says what went wrong, in words a user can act on,
// and where it was made (file:line) for whoever debugs it.
#pragma once

#include <optional>
#include <source_location>
#include <string>
#include <utility>
#include <variant>

namespace gpuctl {

enum class ErrorCode {
  kOk = 0,
  kInvalidArgument,    // the caller's input is wrong; say what and how to fix it
  kNotFound,           // a file, process, job or device is not there
  kAlreadyExists,      // a name or socket is taken
  kPermissionDenied,
  kFailedPrecondition, // the system is not in a state where this can run
  kUnavailable,        // something we depend on cannot be reached right now
  kIo,                 // a read or write failed
  kInternal,
};

const char* ErrorCodeName(ErrorCode code);

class [[nodiscard]] Status {
 public:
  Status() = default;  // ok
  Status(ErrorCode code, std::string message,
         std::source_location where = std::source_location::current());

  static Status Ok() { return {}; }

  bool ok() const { return code_ == ErrorCode::kOk; }
  ErrorCode code() const { return code_; }
  const std::string& message() const { return message_; }
  // "file.cc:42", empty for ok.
  std::string where() const;
  // "NOT_FOUND: message (file.cc:42)" for logs.
  std::string ToString() const;

  // Prefixes context: Status(kIo, "x").Wrap("reading config") -> "reading config: x".
  Status Wrap(const std::string& context) const;

 private:
  ErrorCode code_ = ErrorCode::kOk;
  std::string message_;
  const char* file_ = "";
  unsigned line_ = 0;
};

Status InvalidArgument(std::string message, std::source_location where = std::source_location::current());
Status NotFound(std::string message, std::source_location where = std::source_location::current());
Status FailedPrecondition(std::string message, std::source_location where = std::source_location::current());
Status Unavailable(std::string message, std::source_location where = std::source_location::current());
Status IoError(std::string message, std::source_location where = std::source_location::current());
Status Internal(std::string message, std::source_location where = std::source_location::current());
// An error from errno, e.g. ErrnoError("open /x", errno) -> "open /x: No such file or directory".
Status ErrnoError(const std::string& what, int err,
                  std::source_location where = std::source_location::current());

// Either a value or a non-ok Status.
template <typename T>
class [[nodiscard]] Result {
 public:
  Result(T value) : value_(std::move(value)) {}  // NOLINT: implicit by design
  Result(Status status) : status_(std::move(status)) {}  // NOLINT
  bool ok() const { return value_.has_value(); }
  const Status& status() const { return status_; }
  T& value() & { return *value_; }
  const T& value() const& { return *value_; }
  T&& value() && { return std::move(*value_); }
  T* operator->() { return &*value_; }
  const T* operator->() const { return &*value_; }
  T& operator*() & { return *value_; }
  const T& operator*() const& { return *value_; }
  T value_or(T fallback) const { return value_ ? *value_ : std::move(fallback); }

 private:
  std::optional<T> value_;
  Status status_;
};

}  // namespace gpuctl
