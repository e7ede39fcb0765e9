// What a provisioning run reports as it goes (a StepReport per step phase)
// and at the end (ProvisionResult); the daemon puts both on the wire.
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "agents/provision/step.h"

namespace gpuctl::provision {

enum class StepPhase { kPlanned, kSkipped, kRunning, kDone, kFailed };
const char* StepPhaseName(StepPhase phase);  // "planned", "skipped", ...

struct StepFailure {
  CommandLine command;        // empty argv: no command failed (a refusal, a check)
  int exit_code = -1;
  int term_signal = 0;
  std::string output_tail;
  std::string message;
  bool refused = false;
};

struct StepReport {
  std::string step;
  StepPhase phase = StepPhase::kPlanned;
  std::string detail;
  std::vector<CommandLine> commands;  // planned: the apply commands in order
  std::optional<StepFailure> failure;
  int64_t elapsed_ms = 0;
  std::vector<std::string> notes;
};

struct ProvisionResult {
  bool ok = false;
  bool dry_run = false;
  bool reboot_required = false;
  std::vector<StepReport> steps;  // each step's last report
  std::string failed_step;
  bool refused = false;
  std::string state_file;
  int64_t elapsed_ms = 0;
};

using StepReportSink = std::function<void(const StepReport&)>;

}  // namespace gpuctl::provision
