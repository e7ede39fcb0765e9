// This process's environment, read in one place (the agent's own, or the
// client's): callers get values, tests pass values instead.
#pragma once

#include <optional>
#include <string>

namespace gpuctl::sys {

// $name, or nullopt when it is not set (set but empty is "").
std::optional<std::string> EnvironmentVariable(const std::string& name);

}  // namespace gpuctl::sys
