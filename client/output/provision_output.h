// How provisioning looks: a line per step phase as it happens (with the
// planned commands, notes and, on failure, the command, its exit status and
// the tail of its output), then a summary table. -o json: each event as a
// JSON line ({"step": ...} or, last, {"summary": ...}).
#pragma once

#include <string>

#include <nlohmann/json.hpp>

#include "gpuctl/v1/provision.pb.h"

namespace gpuctl::client {

const char* StepPhaseText(v1::StepPhase phase);  // "planned", "skipped", ...

// The lines for one step event, newline-terminated.
std::string StepEventToText(const v1::StepEvent& step);
// The summary table and the closing line (ok / failed at STEP / reboot needed).
std::string ProvisionSummaryToText(const v1::ProvisionSummary& summary);

nlohmann::json ProvisionEventToJson(const v1::ProvisionEvent& event);

}  // namespace gpuctl::client
