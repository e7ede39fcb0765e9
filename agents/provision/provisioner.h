// Runs a provisioning request: plans the steps, then for each one checks
// (skipped when done), applies its actions, and verifies by checking again.
// The first failure ends the run; progress is saved after every step so a
// rerun says where the last one stopped. One run at a time per agent.
#pragma once

#include <atomic>
#include <functional>
#include <memory>
#include <mutex>

#include "agents/provision/guarded_build.h"
#include "agents/provision/plan_facts.h"
#include "agents/provision/provision_events.h"
#include "agents/provision/provision_options.h"
#include "agents/sys/clock.h"
#include "agents/sys/command_runner.h"

namespace gpuctl::provision {

// Where the host's facts come from (the host probe in the agent; literals in tests).
using FactsSource = std::function<PlanFacts()>;

class Provisioner {
 public:
  // `builds` may be null: extension builds then run as plain commands.
  Provisioner(ProvisionConfig config, sys::CommandRunner& runner, const sys::Clock& clock,
              GuardedBuildRunner* builds, FactsSource facts);

  // Reports each step's phases to `sink` as they happen (from this thread) and
  // returns the summary. A step failure is a result with ok=false, not an
  // error. `cancel`, when set, stops the run between actions.
  // Errors (nothing ran): kInvalidArgument for bad options, kAlreadyExists
  // while another run is in progress.
  Result<ProvisionResult> Run(const ProvisionOptions& options, const StepReportSink& sink,
                              const std::atomic<bool>* cancel = nullptr);

  const ProvisionConfig& config() const { return config_; }

  // Agent shutdown: runs stop before their next action. True when no run is
  // left after `wait` (a command in flight is not killed: a half-run dpkg is
  // worse than a late exit).
  bool StopAndWait(std::chrono::milliseconds wait);

 private:
  ProvisionConfig config_;
  sys::CommandRunner& runner_;
  const sys::Clock& clock_;
  GuardedBuildRunner* builds_;
  FactsSource facts_;
  std::timed_mutex run_mutex_;
  std::atomic<bool> stopping_{false};
};

}  // namespace gpuctl::provision
