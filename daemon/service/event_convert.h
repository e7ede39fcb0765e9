// Agent events between the plain model and the wire.
#pragma once

#include <string>
#include <string_view>

#include "agents/events/agent_event.h"
#include "gpuctl/v1/events.pb.h"

namespace gpuctl::daemon {

// Strings become valid UTF-8 (a proto3 string that is not fails to parse at
// the client and would end its stream); fields become a JSON object's text.
void ToProto(const events::AgentEvent& in, v1::AgentEvent& out);

}  // namespace gpuctl::daemon
