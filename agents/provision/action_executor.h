// Runs one step's actions in order: commands through the target with a
// timeout (guarded builds through the build runner), file writes atomically.
// The first action that fails stops it and is described: the command, its
// exit status and the tail of its output.
#pragma once

#include <functional>
#include <optional>
#include <vector>

#include "agents/provision/provision_events.h"
#include "agents/provision/step_context.h"

namespace gpuctl::provision {

// How an action appears in the plan: its resolved command, or "write PATH".
CommandLine DescribeAction(const StepContext& context, const StepAction& action);

// nullopt when every action succeeded.
// `cancelled` is asked before each action.
std::optional<StepFailure> ExecuteActions(const StepContext& context, const std::vector<StepAction>& actions,
                                          const std::function<bool()>& cancelled);

}  // namespace gpuctl::provision
