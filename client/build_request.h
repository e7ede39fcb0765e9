// `gpuctl build` flags -> StartJobRequest for a build job: a pure function,
// tested without an agent. Shares `train start`'s rules for the name, the
// command after "--", --env and --cwd.
#pragma once

#include <string>
#include <vector>

#include "client/train_start_request.h"
#include "common/status.h"
#include "gpuctl/v1/jobs.pb.h"

namespace gpuctl::client {

struct BuildFlags {
  TrainStartFlags job;     // name, env, cwd, container, command
  std::string mem_budget;  // a size, e.g. 64G; empty: the agent's default
  std::string cpus;        // a count; empty: every CPU the agent may use
  std::string archs;       // "9.0,10.0"; empty: the GPUs present
  bool wait = false;       // follow the log and exit with the build's result
};

// A build job's name when none is given: build-YYYYMMDD-HHMMSS (UTC) of `unix_ms`.
std::string DefaultBuildName(int64_t unix_ms);

// Errors (kInvalidArgument, exit 2, nothing started): no command, a bad
// size, CPU count or arch list, and what BuildStartJobRequest refuses.
Result<v1::StartJobRequest> BuildBuildJobRequest(const BuildFlags& flags, const std::string& client_cwd);

}  // namespace gpuctl::client
