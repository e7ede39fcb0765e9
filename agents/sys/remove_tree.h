// rm -rf that never follows a link: a job's directory may hold links a job
// planted (to /etc, to another job), and removing the job must remove the
// links, never what they point at.
#pragma once

#include <string>

#include "common/status.h"

namespace gpuctl::sys {

// Removes `path` and, when it is a directory, everything beneath it. Every
// level is opened from its parent's descriptor with O_NOFOLLOW, so a
// directory swapped for a link midway is not descended into; beneath a
// container's root (confined_root.h) `path` is resolved inside it.
// A missing path is not an error. Errors: the first entry that cannot be
// removed (kPermissionDenied, kIo, ...), naming it; the rest is still tried.
Status RemoveTree(const std::string& path);

}  // namespace gpuctl::sys
