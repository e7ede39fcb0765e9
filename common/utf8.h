// Text from outside (a job's log, a file a container can write, a command's
// output) may hold any byte. It is made well-formed UTF-8 where it enters
// records, events and protos: JSON writers and protobuf string fields
// require it, and one bad byte must never stop the agent. Raw log streams
// stay byte-exact; only text taken from them is cleaned.
#pragma once

#include <string>
#include <string_view>

namespace gpuctl {

// Well-formed UTF-8 (RFC 3629): no overlong forms, no surrogates, nothing
// above U+10FFFF, no truncated sequence.
bool IsValidUtf8(std::string_view text);

// `text` with every ill-formed sequence replaced by U+FFFD, one per maximal
// ill-formed subpart (as the WHATWG and Unicode "best practice" decoders
// do). Well-formed text comes back unchanged.
std::string SanitizeUtf8(std::string_view text);

}  // namespace gpuctl
