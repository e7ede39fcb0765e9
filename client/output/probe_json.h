// The JSON form of a host probe: a documented contract for scripts (README,
// "Probe"). snake_case names, only ever added; what the probe could not
// determine is null (versions) or absent from a list, and explained in "notes".
#pragma once

#include <nlohmann/json.hpp>

#include "gpuctl/v1/probe.pb.h"

namespace gpuctl::client {

nlohmann::json ProbeToJson(const v1::HostProbe& probe);

}  // namespace gpuctl::client
