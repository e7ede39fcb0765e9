// What every step is given: where it acts, the facts, the request, the
// agent's settings, and (for extension builds) the guarded job runner.
#pragma once

#include "agents/provision/guarded_build.h"
#include "agents/provision/plan_facts.h"
#include "agents/provision/provision_options.h"
#include "agents/provision/step_target.h"

namespace gpuctl::provision {

struct StepContext {
  const StepTarget& target;
  const PlanFacts& facts;
  const ProvisionOptions& options;  // normalized
  const ProvisionConfig& config;
  GuardedBuildRunner* builds = nullptr;  // null: extension builds run as plain commands
  // Where downloads (the CUDA keyring) are kept, as the target sees it.
  std::string download_dir;

  bool Planned(std::string_view step) const {
    for (const auto& s : options.steps) {
      if (s == step) return true;
    }
    return false;
  }
};

}  // namespace gpuctl::provision
