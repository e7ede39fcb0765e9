// Progress of provisioning runs, kept in STATE_DIR/provision/state.json
// (written atomically after every step) so that a rerun can say where the
// last one stopped and resume there; checks make finished steps skip anyway.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>

#include "agents/provision/provision_events.h"
#include "common/status.h"

namespace gpuctl::provision {

struct StepRecord {
  std::string phase;  // StepPhaseName
  std::string detail;
  int64_t updated_unix_ms = 0;
};

struct ProvisionState {
  std::map<std::string, StepRecord> steps;
  std::string failed_step;               // empty when the last run did not fail
  std::optional<StepFailure> failure;    // what failed there
  std::string container;                 // the run's target; empty: the host
  int64_t updated_unix_ms = 0;
};

std::string ProvisionStatePath(const std::string& state_dir);  // STATE_DIR/provision/state.json

std::string SerializeProvisionState(const ProvisionState& state);
// Errors: kInvalidArgument for text that is not a state file.
Result<ProvisionState> ParseProvisionState(std::string_view text);

// A missing file is an empty state.
Result<ProvisionState> LoadProvisionState(const std::string& path);
Status SaveProvisionState(const std::string& path, const ProvisionState& state);

}  // namespace gpuctl::provision
