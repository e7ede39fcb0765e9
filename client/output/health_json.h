// The JSON form of a health snapshot: a documented contract for scripts
// (README, "JSON contract"). Names are only ever added.
#pragma once

#include <nlohmann/json.hpp>

#include "gpuctl/v1/health.pb.h"

namespace gpuctl::client {

nlohmann::json HealthToJson(const v1::HealthSnapshot& snapshot);
// gpus[].fault, and `gpuctl gpu drain|undrain -o json`'s: xid (or null),
// message, since_unix_ms, manual, reason.
nlohmann::json GpuFaultJson(const v1::GpuFault& fault);

}  // namespace gpuctl::client
