// `train start --multinode --wait`: staying with a multi-node job until
// every part has ended, naming the part that failed first (with its node),
// stopping the others after a grace, and relaunching every part with the
// change an agent's OOM remediation made to one.
#pragma once

#include <chrono>

#include "client/fleet/fan_out.h"
#include "client/multinode/multinode_store.h"

namespace gpuctl::client {

struct CommandContext;

// Returns the exit code: 0 when every part succeeded, else 1.
int SuperviseMultinode(CommandContext& ctx, NodePool& pool, const MultinodeJob& job, std::chrono::milliseconds grace);

}  // namespace gpuctl::client
