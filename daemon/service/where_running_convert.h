// sys::WhereRunning to the wire: one converter for health and probe, so the
// two answers cannot differ in translation.
#pragma once

#include "agents/sys/where_running.h"
#include "gpuctl/v1/health.pb.h"

namespace gpuctl::daemon {

v1::WhereKind WhereKindToProto(sys::WhereKind kind);
void WhereRunningToProto(const sys::WhereRunning& in, v1::WhereRunning& out);

}  // namespace gpuctl::daemon
