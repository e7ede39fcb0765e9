// The human form of a health snapshot: one host line, then a row per GPU.
#pragma once

#include <string>

#include "gpuctl/v1/health.pb.h"

namespace gpuctl::client {

std::string HealthToText(const v1::HealthSnapshot& snapshot);

}  // namespace gpuctl::client
