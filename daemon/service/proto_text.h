// Every string field of an outgoing message made valid UTF-8. A proto3
// string that is not fails to parse at the client, which then sees the
// whole call fail: one byte in a log line would break `train list` for
// every job. Called by the converters on what they build.
#pragma once

#include <google/protobuf/message.h>

namespace gpuctl::daemon {

// Walks `message` (sub-messages, repeated fields and maps included) and
// replaces ill-formed UTF-8 in `string` fields with U+FFFD. `bytes` fields
// (raw log chunks) are left byte-exact.
void MakeStringsUtf8(google::protobuf::Message& message);

}  // namespace gpuctl::daemon
