// The JSON form of a health snapshot: a documented contract for scripts
// (README, "JSON contract"). Names are only ever added.
#pragma once

#include <nlohmann/json.hpp>

#include "gpuctl/v1/health.pb.h"

namespace gpuctl::client {

nlohmann::json HealthToJson(const v1::HealthSnapshot& snapshot);

}  // namespace gpuctl::client
