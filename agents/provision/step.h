// A provisioning step: Check (is it already done?), Plan (the exact actions
// that would make it so) and, run by the plan runner, apply then verify (the
// same Check again; still not done means the step failed).
#pragma once

#include <chrono>
#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "common/status.h"

namespace gpuctl::provision {

// One thing apply does: run a command, or write a file (when argv is empty).
struct StepAction {
  std::vector<std::string> argv;
  std::map<std::string, std::string> env;  // added to the agent's environment
  std::chrono::milliseconds timeout{0};    // 0: the config's apply timeout
  // A file write: path as the target sees it (/etc/profile.d/...), content.
  std::string write_path;
  std::string content;
  // Run as a guarded job in a memory cgroup of its own (extension builds).
  bool guarded = false;
  uint64_t mem_limit_bytes = 0;
};

// A command as it really runs (after the target wrapped it), for people.
struct CommandLine {
  std::vector<std::string> argv;
  std::map<std::string, std::string> env;
};

struct StepCheck {
  bool done = false;
  std::string detail;              // why done, or what is missing
  std::vector<std::string> notes;  // reboot needed, a mismatch found and how it is resolved
  bool reboot_required = false;
};

struct StepPlan {
  std::vector<StepAction> actions;
  std::vector<std::string> notes;  // numbers chosen and why
};

class Step {
 public:
  virtual ~Step() = default;
  virtual std::string Name() const = 0;
  // Read-only. Errors: kFailedPrecondition is a refusal (the step will not
  // act: a mismatch or missing configuration; the message gives the ways
  // out); anything else means a check could not be made.
  virtual Result<StepCheck> Check() = 0;
  // The actions for a step whose check said not done. Same error contract.
  virtual Result<StepPlan> Plan(const StepCheck& check) = 0;
};

// A refusal as Check and Plan return it.
inline Status Refusal(std::string message) { return FailedPrecondition(std::move(message)); }

}  // namespace gpuctl::provision
