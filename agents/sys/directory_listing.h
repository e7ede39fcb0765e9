// Names in a directory, for probes that look for installed things by name
// (/usr/local/cuda-*, libnvidia-ml.so.*) under a HostFs root.
#pragma once

#include <string>
#include <vector>

namespace gpuctl::sys {

// The entry names in `path` (not "." or ".."), sorted; empty when the
// directory is missing or unreadable: callers probe, they do not require.
// Beneath a container's root (confined_root.h) the path is resolved inside it.
std::vector<std::string> ListDirectoryNames(const std::string& path);

}  // namespace gpuctl::sys
