// `--nodes` forms of health, train list, train status, events and probe:
// every selected node asked at once, one table with a NODE column, or one
// JSON line per node (per event for events), each with "node".
#pragma once

#include <cstdint>
#include <string>

#include "gpuctl/v1/probe.pb.h"

namespace gpuctl::client {

struct CommandContext;

void RunFleetHealth(CommandContext& context);
void RunFleetJobList(CommandContext& context);
void RunFleetJobStatus(CommandContext& context, const std::string& name);
// The events each node still keeps, merged oldest first.
void RunFleetEvents(CommandContext& context, uint64_t after);
void RunFleetProbe(CommandContext& context, const v1::ProbeRequest& request);

}  // namespace gpuctl::client
