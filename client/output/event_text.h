// The human form of agent events (`gpuctl events`): one line each,
//   2025-06-01T14:03:07.123+02:00 guard_kill     dflash killed job dflash ...
// time in local time to the millisecond with its UTC offset, kind, job (or
// "-"), message (line breaks and tabs become spaces; other control
// characters, C1 controls, bidi controls and bad UTF-8 are shown escaped, as
// EscapeForTerminal does).
#pragma once

#include <cstdint>
#include <string>

#include "gpuctl/v1/events.pb.h"

namespace gpuctl::client {

// The line, with its trailing newline.
std::string AgentEventToText(const v1::AgentEvent& event);

// "2025-06-01T14:03:07.123+02:00" in the local time zone ($TZ).
std::string FormatLocalTimeMs(int64_t unix_ms);

}  // namespace gpuctl::client
