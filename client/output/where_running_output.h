// Where the agent runs (v1::WhereRunning), in words and in JSON: one place, so
// `health` and `probe` say it the same way.
#pragma once

#include <nlohmann/json.hpp>
#include <string>

#include "gpuctl/v1/health.pb.h"

namespace gpuctl::client {

// "bare metal", "VM (KVM)", "VM", "Docker container", "Podman container",
// "LXC guest", "container"; "" from an agent older than the field.
std::string WhereRunningText(const v1::WhereRunning& where);
// The evidence, "; "-separated and escaped for a terminal.
std::string WhereEvidenceText(const v1::WhereRunning& where);
// {"kind": "vm", "hypervisor": "KVM" or null, "evidence": [...]}; kind is one
// of "bare-metal", "vm", "docker", "podman", "lxc", "container", "unknown".
nlohmann::json WhereRunningJson(const v1::WhereRunning& where);

}  // namespace gpuctl::client
