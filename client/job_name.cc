#include "client/job_name.h"

#include <string>

namespace gpuctl::client {
namespace {

bool IsNameChar(char c) {
  return (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '.' || c == '_' ||
         c == '-';
}

}  // namespace

Status ValidateJobName(std::string_view name) {
  bool ok = !name.empty() && name.size() <= 64 && name != "." && name != "..";
  for (char c : name) ok = ok && IsNameChar(c);
  if (!ok) {
    return InvalidArgument("invalid job name '" + std::string(name) +
                           "': use 1-64 characters from A-Z a-z 0-9 . _ - (e.g. dflash-768)");
  }
  return Status::Ok();
}

}  // namespace gpuctl::client
