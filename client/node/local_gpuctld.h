// Finding the gpuctld to install on a node: the one that belongs to this
// gpuctl, so client and agent come from the same build.
#pragma once

#include <string>

#include "common/status.h"

namespace gpuctl::client {

// `override_path` when given; else gpuctld beside the running gpuctl
// (an install), then ../daemon/gpuctld (the build tree), then PATH.
// Errors: kNotFound naming where it looked and --gpuctld as the fix.
Result<std::string> FindLocalGpuctld(const std::string& override_path);

}  // namespace gpuctl::client
