#include "common/job_name.h"

#include <string>

namespace gpuctl {
namespace {

bool IsNameChar(char c) {
  return (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '.' || c == '_' ||
         c == '-';
}

Status Refuse(std::string_view name) {
  return InvalidArgument("invalid job name '" + std::string(name) +
                         "': use 1-64 characters from A-Z a-z 0-9 . _ -, not starting with '-' (e.g. dflash-768)");
}

}  // namespace

Status ValidateJobName(std::string_view name) {
  bool ok = !name.empty() && name.size() <= 64 && name != "." && name != "..";
  for (char c : name) ok = ok && IsNameChar(c);
  return ok ? Status::Ok() : Refuse(name);
}

Status ValidateNewJobName(std::string_view name) {
  if (Status s = ValidateJobName(name); !s.ok()) return s;
  return name.front() == '-' ? Refuse(name) : Status::Ok();
}

}  // namespace gpuctl
