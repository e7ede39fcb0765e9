// The JSON form of agent events, one object per line (`gpuctl -o json
// events`): a documented contract for scripts. Names are only ever added.
//
// An event: seq (0 on a synthetic events_dropped event), time_unix_ms, kind,
// job (null: none), message, fields (an object with the kind's figures;
// events_dropped: count, first_seq, last_seq). Fields the agent sent that are
// not a JSON object are kept as {"unparsed": "<text>"}.
#pragma once

#include <nlohmann/json.hpp>

#include "gpuctl/v1/events.pb.h"

namespace gpuctl::client {

nlohmann::json AgentEventToJson(const v1::AgentEvent& event);

}  // namespace gpuctl::client
