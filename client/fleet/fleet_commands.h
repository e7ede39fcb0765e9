// `--nodes` forms of health, train list, train status, events and probe:
// every selected node asked at once, one table with a NODE column, or one
// JSON line per node (per event for events), each with "node".
#pragma once

#include <cstdint>
#include <functional>
#include <set>
#include <string>

#include "gpuctl/v1/events.pb.h"
#include "gpuctl/v1/jobs.pb.h"
#include "gpuctl/v1/probe.pb.h"

namespace gpuctl::client {

struct CommandContext;

void RunFleetHealth(CommandContext& context);
// `states` (--state): only jobs in these; empty: all.
void RunFleetJobList(CommandContext& context, const std::set<v1::JobState>& states = {});
void RunFleetJobStatus(CommandContext& context, const std::string& name);
// The events each node still keeps, merged oldest first.
// `keep` (--job, --kind): the events to show; empty: all.
void RunFleetEvents(CommandContext& context, uint64_t after,
                    const std::function<bool(const v1::AgentEvent&)>& keep = {});
void RunFleetProbe(CommandContext& context, const v1::ProbeRequest& request);

}  // namespace gpuctl::client
