// The one JSON writer: never throws, whatever bytes a string holds. Invalid
// UTF-8 (from a log line, a file a job wrote) is written as U+FFFD instead
// of aborting the process, as nlohmann's default dump() would.
#pragma once

#include <string>

#include <nlohmann/json.hpp>

namespace gpuctl {

// indent -1: one line; otherwise pretty-printed with that many spaces.
std::string DumpJson(const nlohmann::json& json, int indent = -1);

}  // namespace gpuctl
