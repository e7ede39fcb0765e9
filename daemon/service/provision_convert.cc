#include "daemon/service/provision_convert.h"
#include "daemon/service/proto_text.h"

namespace gpuctl::daemon {
namespace {

v1::StepPhase ToProto(provision::StepPhase phase) {
  switch (phase) {
    case provision::StepPhase::kPlanned: return v1::STEP_PHASE_PLANNED;
    case provision::StepPhase::kSkipped: return v1::STEP_PHASE_SKIPPED;
    case provision::StepPhase::kRunning: return v1::STEP_PHASE_RUNNING;
    case provision::StepPhase::kDone: return v1::STEP_PHASE_DONE;
    case provision::StepPhase::kFailed: return v1::STEP_PHASE_FAILED;
  }
  return v1::STEP_PHASE_UNSPECIFIED;
}

void ToProto(const provision::CommandLine& command, v1::ProvisionCommand& out) {
  for (const auto& arg : command.argv) out.add_argv(arg);
  for (const auto& [key, value] : command.env) (*out.mutable_env())[key] = value;
}

}  // namespace

provision::ProvisionOptions FromProto(const v1::ProvisionRequest& request) {
  provision::ProvisionOptions options;
  options.steps.assign(request.steps().begin(), request.steps().end());
  options.dry_run = request.dry_run();
  options.cuda_version = request.cuda_version();
  options.torch_version = request.torch_version();
  options.venv_path = request.venv_path();
  options.ext = request.ext();
  options.container = request.container();
  options.driver_branch = request.driver_branch();
  options.replace_driver = request.replace_driver();
  options.secure_boot_enrolled = request.secure_boot_enrolled();
  options.torch_index = request.torch_index();
  options.allow_insecure_index = request.allow_insecure_index();
  options.cuda_unlisted = request.cuda_unlisted();
  options.ext_source = request.ext_source();
  return options;
}

v1::ProvisionEvent ToProtoEvent(const provision::StepReport& report) {
  v1::ProvisionEvent event;
  v1::StepEvent& step = *event.mutable_step();
  step.set_step(report.step);
  step.set_phase(ToProto(report.phase));
  step.set_detail(report.detail);
  for (const auto& command : report.commands) ToProto(command, *step.add_commands());
  if (report.failure) {
    v1::StepFailure& failure = *step.mutable_failure();
    ToProto(report.failure->command, *failure.mutable_command());
    failure.set_exit_code(report.failure->exit_code);
    failure.set_term_signal(report.failure->term_signal);
    failure.set_output_tail(report.failure->output_tail);
    failure.set_message(report.failure->message);
    failure.set_refused(report.failure->refused);
  }
  step.set_elapsed_ms(report.elapsed_ms);
  for (const auto& note : report.notes) step.add_notes(note);
  MakeStringsUtf8(event);
  return event;
}

v1::ProvisionEvent ToProtoEvent(const provision::ProvisionResult& result) {
  v1::ProvisionEvent event;
  v1::ProvisionSummary& summary = *event.mutable_summary();
  summary.set_ok(result.ok);
  summary.set_dry_run(result.dry_run);
  summary.set_reboot_required(result.reboot_required);
  for (const auto& report : result.steps) {
    v1::StepSummary& step = *summary.add_steps();
    step.set_step(report.step);
    step.set_phase(ToProto(report.phase));
    step.set_detail(report.detail);
    step.set_elapsed_ms(report.elapsed_ms);
  }
  summary.set_failed_step(result.failed_step);
  summary.set_refused(result.refused);
  summary.set_state_file(result.state_file);
  summary.set_elapsed_ms(result.elapsed_ms);
  MakeStringsUtf8(event);
  return event;
}

}  // namespace gpuctl::daemon
