// This process's environment, read in one place (the agent's own, or the
// client's): callers get values, tests pass values instead.
#pragma once

#include <map>
#include <optional>
#include <string>

namespace gpuctl::sys {

// $name, or nullopt when it is not set (set but empty is "").
std::optional<std::string> EnvironmentVariable(const std::string& name);
// Every variable of this process's environment (an entry without '=' is
// skipped; of a name given twice, the first wins, as getenv would).
std::map<std::string, std::string> ProcessEnvironment();

}  // namespace gpuctl::sys
