// The pid files a job's wrapper writes (the command's pid; a container
// build's pid at its gate): a number and a newline, written inside the
// container for a container job, where the container numbers the process.
#pragma once

#include <cstdint>
#include <optional>
#include <string>

#include "agents/sys/process_control.h"

namespace gpuctl::train {

// The process a pid file names, as the host numbers it; nullopt while the
// file is unwritten or malformed, or its process is not (or no longer)
// visible. `written`, when given, gets the number as written.
std::optional<int64_t> HostPidFromPidFile(sys::ProcessControl& processes, const std::string& path,
                                          int64_t* written = nullptr);

}  // namespace gpuctl::train
