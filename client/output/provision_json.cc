// The JSON contract of `gpuctl -o json provision node`: one object per line,
// {"step": {...}} for each step phase and {"summary": {...}} last. Field names
// are the proto's, in snake_case; phases are words ("planned", "done").
#include "client/output/provision_output.h"

namespace gpuctl::client {
namespace {

nlohmann::json CommandJson(const v1::ProvisionCommand& command) {
  nlohmann::json env = nlohmann::json::object();
  for (const auto& [key, value] : command.env()) env[key] = value;
  return {{"argv", std::vector<std::string>(command.argv().begin(), command.argv().end())}, {"env", env}};
}

}  // namespace

nlohmann::json ProvisionEventToJson(const v1::ProvisionEvent& event) {
  if (event.has_summary()) {
    const v1::ProvisionSummary& s = event.summary();
    nlohmann::json steps = nlohmann::json::array();
    for (const auto& step : s.steps()) {
      steps.push_back({{"step", step.step()},
                       {"phase", StepPhaseText(step.phase())},
                       {"detail", step.detail()},
                       {"elapsed_ms", step.elapsed_ms()}});
    }
    return {{"summary",
             {{"ok", s.ok()},
              {"dry_run", s.dry_run()},
              {"reboot_required", s.reboot_required()},
              {"failed_step", s.failed_step().empty() ? nlohmann::json(nullptr) : nlohmann::json(s.failed_step())},
              {"refused", s.refused()},
              {"state_file", s.state_file()},
              {"elapsed_ms", s.elapsed_ms()},
              {"steps", steps}}}};
  }
  const v1::StepEvent& step = event.step();
  nlohmann::json commands = nlohmann::json::array();
  for (const auto& command : step.commands()) commands.push_back(CommandJson(command));
  nlohmann::json out = {{"step", step.step()},
                        {"phase", StepPhaseText(step.phase())},
                        {"detail", step.detail()},
                        {"commands", commands},
                        {"notes", std::vector<std::string>(step.notes().begin(), step.notes().end())},
                        {"elapsed_ms", step.elapsed_ms()}};
  if (step.has_failure()) {
    const v1::StepFailure& f = step.failure();
    out["failure"] = {{"command", CommandJson(f.command())},
                      {"exit_code", f.exit_code()},
                      {"term_signal", f.term_signal()},
                      {"output_tail", f.output_tail()},
                      {"message", f.message()},
                      {"refused", f.refused()}};
  }
  return {{"step", out}};
}

}  // namespace gpuctl::client
