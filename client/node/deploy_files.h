// deploy/gpuctld.service and deploy/gpuctld.json, built into gpuctl (see
// client/CMakeLists.txt) so that a bootstrapped node gets the same unit and
// default config as deploy/install.sh installs.
#pragma once

#include <string_view>

namespace gpuctl::client {

std::string_view DeployedUnitFile();
std::string_view DeployedConfigFile();

}  // namespace gpuctl::client
