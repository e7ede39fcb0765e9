// How provisioning looks to a person and to a script.
#include <gtest/gtest.h>

#include "client/output/provision_output.h"

namespace gpuctl::client {
namespace {

v1::StepEvent FailedCuda() {
  v1::StepEvent step;
  step.set_step("cuda");
  step.set_phase(v1::STEP_PHASE_FAILED);
  step.set_elapsed_ms(41300);
  v1::StepFailure& failure = *step.mutable_failure();
  failure.mutable_command()->add_argv("apt-get");
  failure.mutable_command()->add_argv("install");
  failure.mutable_command()->add_argv("-y");
  failure.mutable_command()->add_argv("cuda-toolkit-13-1");
  (*failure.mutable_command()->mutable_env())["DEBIAN_FRONTEND"] = "noninteractive";
  failure.set_exit_code(100);
  failure.set_output_tail("Reading package lists...\nE: Unable to fetch some archives");
  failure.set_message("'apt-get install -y cuda-toolkit-13-1' exited with status 100");
  return step;
}

TEST(ProvisionOutput, PlannedStepShowsItsCommandsReadyToPaste) {
  v1::StepEvent step;
  step.set_step("torch");
  step.set_phase(v1::STEP_PHASE_PLANNED);
  step.set_detail("torch does not import in /opt/venv");
  v1::ProvisionCommand& command = *step.add_commands();
  for (const char* arg : {"python", "-c", "import torch; print(1)"}) command.add_argv(arg);
  step.add_notes("index cu130 for CUDA toolkit 13.1");
  EXPECT_EQ(StepEventToText(step),
            "torch       planned torch does not import in /opt/venv\n"
            "            $ python -c 'import torch; print(1)'\n"
            "            note: index cu130 for CUDA toolkit 13.1\n");
}

TEST(ProvisionOutput, FailedStepShowsCommandExitStatusAndTail) {
  std::string text = StepEventToText(FailedCuda());
  EXPECT_EQ(text,
            "cuda        failed  (41.3 s)\n"
            "            'apt-get install -y cuda-toolkit-13-1' exited with status 100\n"
            "            command: DEBIAN_FRONTEND=noninteractive apt-get install -y cuda-toolkit-13-1\n"
            "            exit status: 100\n"
            "            last output:\n"
            "              | Reading package lists...\n"
            "              | E: Unable to fetch some archives\n");
}

TEST(ProvisionOutput, SummaryTableSaysWhereItStopped) {
  v1::ProvisionSummary summary;
  summary.set_ok(false);
  summary.set_failed_step("cuda");
  summary.set_state_file("/var/lib/gpuctl/provision/state.json");
  auto* driver = summary.add_steps();
  driver->set_step("driver");
  driver->set_phase(v1::STEP_PHASE_SKIPPED);
  driver->set_detail("nvidia-open 590.44.01-1 installed and held");
  auto* venv = summary.add_steps();
  venv->set_step("venv");
  venv->set_phase(v1::STEP_PHASE_PLANNED);
  venv->set_detail("not reached");
  std::string text = ProvisionSummaryToText(summary);
  EXPECT_NE(text.find("driver  skipped (done)  -     nvidia-open 590.44.01-1 installed and held"), std::string::npos)
      << text;
  EXPECT_NE(text.find("venv    planned         -     not reached"), std::string::npos) << text;
  EXPECT_NE(text.find("stopped at cuda (failed)"), std::string::npos) << text;
  EXPECT_NE(text.find("/var/lib/gpuctl/provision/state.json"), std::string::npos) << text;

  // A dry run wrote no state file: the refusal does not point to one.
  summary.set_dry_run(true);
  summary.set_refused(true);
  text = ProvisionSummaryToText(summary);
  EXPECT_NE(text.find("stopped at cuda (refused); a dry run changes and records nothing"), std::string::npos) << text;
  EXPECT_EQ(text.find("state.json"), std::string::npos) << text;
}

TEST(ProvisionOutput, JsonLinesCarryTheStepAndTheSummary) {
  v1::ProvisionEvent event;
  *event.mutable_step() = FailedCuda();
  nlohmann::json step = ProvisionEventToJson(event)["step"];
  EXPECT_EQ(step["phase"], "failed");
  EXPECT_EQ(step["failure"]["exit_code"], 100);
  EXPECT_EQ(step["failure"]["command"]["argv"][3], "cuda-toolkit-13-1");
  EXPECT_EQ(step["failure"]["command"]["env"]["DEBIAN_FRONTEND"], "noninteractive");

  v1::ProvisionEvent last;
  last.mutable_summary()->set_ok(true);
  nlohmann::json summary = ProvisionEventToJson(last)["summary"];
  EXPECT_EQ(summary["ok"], true);
  EXPECT_TRUE(summary["failed_step"].is_null());
  EXPECT_TRUE(summary["steps"].is_array());
}

}  // namespace
}  // namespace gpuctl::client
