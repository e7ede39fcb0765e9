// A file the agent appends lines to (its event journal): whole lines or
// nothing, so a line cut short never glues itself to the next one.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include "agents/sys/unique_fd.h"
#include "common/status.h"

namespace gpuctl::sys {

struct AppendTarget {
  UniqueFd fd;
  uint64_t size = 0;  // bytes already in the file
};

// Opens `path` O_WRONLY|O_APPEND, created with `mode`. O_NOFOLLOW: a link
// planted in its place is refused. Errors: from the open (naming `path`),
// kFailedPrecondition when it is not a regular file.
Result<AppendTarget> OpenForAppend(const std::string& path, unsigned mode);

// Writes all of `bytes` at the end of `fd` (retrying short writes and
// EINTR). When a write fails after part of `bytes` went out, the file is cut
// back to `size_before`. Errors: "cannot append to WHAT: <errno text>".
Status AppendAll(int fd, std::string_view bytes, uint64_t size_before, const std::string& what);

}  // namespace gpuctl::sys
