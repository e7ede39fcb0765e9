// Issue 20: text from outside (a job's output, a node's files, a node's
// error) never drives the terminal through a human-readable output. Each
// formatter gets a proto with every string field hostile (OSC title, clear
// screen, hidden text, C0/C1 controls, bidi overrides, bad UTF-8, a line
// break); its output must hold none of them raw, and no more lines than the
// same proto with harmless text gives. -o json stays JSON and valid UTF-8.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "client/output/event_json.h"
#include "client/output/event_text.h"
#include "client/output/fleet_text.h"
#include "client/output/health_json.h"
#include "client/output/health_text.h"
#include "client/output/job_json.h"
#include "client/output/job_text.h"
#include "client/output/probe_json.h"
#include "client/output/probe_text.h"
#include "client/output/provision_output.h"
#include "client/output/table.h"
#include "client/output/top_view.h"
#include "common/json_text.h"
#include "tests/unit/client/hostile_text.h"

namespace gpuctl::client {
namespace {

using hostile::Filled;
using hostile::HostileText;
using hostile::TerminalSafe;

constexpr int64_t kNow = 1'750'000'000'000;
const std::string kBenign = "x";

// `render` applied to the proto filled with hostile text and with harmless
// text, each then shaped by `shape`.
template <typename T, typename Render, typename Shape>
::testing::AssertionResult SafeFor(Render render, Shape shape) {
  return TerminalSafe(render(Filled<T>(HostileText(), shape)), render(Filled<T>(kBenign, shape)));
}

auto Unshaped = [](auto&) {};

// The job's shapes that print different lines: an unknown state, queued
// (the queue line), a recovering build that failed with a CUDA OOM.
void Queued(v1::Job& job) { job.set_state(v1::JOB_STATE_QUEUED); }
void FailedBuildAfterOom(v1::Job& job) {
  job.set_state(v1::JOB_STATE_FAILED);
  job.mutable_spec()->set_kind("build");
  job.mutable_spec()->set_on_oom("recover");
  job.mutable_events(0)->set_kind("cuda_oom");
  job.mutable_attempts(0)->set_state(v1::JOB_STATE_FAILED);
}

TEST(HostileOutput, TrainStatus) {
  auto render = [](const v1::Job& job) { return JobToText(job, kNow); };
  EXPECT_TRUE(SafeFor<v1::Job>(render, Unshaped));
  EXPECT_TRUE(SafeFor<v1::Job>(render, Queued));
  EXPECT_TRUE(SafeFor<v1::Job>(render, FailedBuildAfterOom));
}

TEST(HostileOutput, TrainList) {
  auto render = [](const v1::ListJobsResponse& list) { return JobListToText(list, kNow); };
  EXPECT_TRUE(SafeFor<v1::ListJobsResponse>(render, Unshaped));
  EXPECT_TRUE(SafeFor<v1::ListJobsResponse>(render, [](v1::ListJobsResponse& list) {
    for (v1::Job& job : *list.mutable_jobs()) Queued(job);
  }));
}

TEST(HostileOutput, TrainStartStopAndAnEventLine) {
  auto started = [](const v1::Job& job) { return JobStartedText(job, "--agent 10.0.0.7:7443 "); };
  EXPECT_TRUE(SafeFor<v1::Job>(started, Unshaped));
  EXPECT_TRUE(SafeFor<v1::Job>(started, Queued));
  EXPECT_TRUE(SafeFor<v1::Job>([](const v1::Job& job) { return JobStoppedText(job, kNow); }, Unshaped));
  auto event = [](const v1::JobEvent& e) { return JobEventToText(e) + "\n"; };
  EXPECT_TRUE(SafeFor<v1::JobEvent>(event, Unshaped));
  EXPECT_TRUE(SafeFor<v1::JobEvent>(event, [](v1::JobEvent& e) { e.clear_exception_type(); }));
  EXPECT_TRUE(SafeFor<v1::JobEvent>(event, [](v1::JobEvent& e) { e.clear_signal_number(); }));
}

TEST(HostileOutput, Events) {
  EXPECT_TRUE(SafeFor<v1::AgentEvent>(AgentEventToText, Unshaped));
}

TEST(HostileOutput, Health) {
  EXPECT_TRUE(SafeFor<v1::HealthSnapshot>(HealthToText, Unshaped));
  EXPECT_TRUE(SafeFor<v1::HealthSnapshot>(HealthToText, [](v1::HealthSnapshot& s) { s.clear_gpus(); }));
}

TEST(HostileOutput, Probe) {
  EXPECT_TRUE(SafeFor<v1::HostProbe>(ProbeToText, Unshaped));
}

TEST(HostileOutput, Provision) {
  // Notes, a failure's message and its output tail are shown as lines, one
  // per line they hold: the shape keeps them to one line, and the test
  // below looks at each line of them.
  auto one_line = [](v1::StepEvent& step) {
    std::string flat = HostileText();
    flat.erase(flat.find('\n'), 1);
    for (std::string& note : *step.mutable_notes()) note = flat;
    step.mutable_failure()->set_message(flat);
    step.mutable_failure()->set_output_tail(flat);
  };
  for (v1::StepPhase phase : {v1::STEP_PHASE_PLANNED, v1::STEP_PHASE_DONE, v1::STEP_PHASE_FAILED}) {
    EXPECT_TRUE(SafeFor<v1::StepEvent>(StepEventToText, [&](v1::StepEvent& step) {
      one_line(step);
      step.set_phase(phase);
    })) << phase;
  }
  for (bool ok : {true, false}) {
    EXPECT_TRUE(SafeFor<v1::ProvisionSummary>(ProvisionSummaryToText, [ok](v1::ProvisionSummary& summary) {
      summary.set_ok(ok);
      summary.set_refused(!ok);
      for (v1::StepSummary& step : *summary.mutable_steps()) step.set_phase(v1::STEP_PHASE_DONE);
    })) << ok;
  }
}

TEST(HostileOutput, MultiLineBlocksKeepTheirLinesEscaped) {
  v1::StepEvent step;
  step.set_step("ext");
  step.set_phase(v1::STEP_PHASE_FAILED);
  step.mutable_failure()->set_output_tail("ok\r\n\x1b]0;pwned\x07\nevil\xe2\x80\xae\n");
  step.add_notes("\x1b[2Jnote");
  EXPECT_EQ(StepEventToText(step),
            "ext         failed  (0.0 s)\n"
            "            note: \\x1b[2Jnote\n"
            "            last output:\n"
            "              | ok\n"
            "              | \\x1b]0;pwned\\x07\n"
            "              | evil\\u202e\n");
}

// The fleet's tables: answers full of hostile text, and a node that did not
// answer, whose error is hostile too.
template <typename T>
std::vector<NodeRow<T>> FleetRows(const T& answer, const std::string& error) {
  return {{"n1", &answer, ""}, {"n2", nullptr, error}};
}

TEST(HostileOutput, FleetTables) {
  auto health = [](const v1::HealthSnapshot& s) {
    return FleetHealthToText(FleetRows(s, "\x1b]0;pwned\x07 host down\nsecond line"));
  };
  EXPECT_TRUE(SafeFor<v1::HealthSnapshot>(health, Unshaped));
  EXPECT_TRUE(SafeFor<v1::HealthSnapshot>(health, [](v1::HealthSnapshot& s) { s.clear_gpus(); }));
  EXPECT_TRUE(SafeFor<v1::ListJobsResponse>(
      [](const v1::ListJobsResponse& list) { return FleetJobsToText(FleetRows(list, "\x1b[2J"), kNow); }, Unshaped));
  EXPECT_TRUE(SafeFor<v1::Job>([](const v1::Job& job) { return FleetJobToText(FleetRows(job, "\xc2\x9b"), kNow); },
                               Unshaped));
  EXPECT_TRUE(SafeFor<v1::HostProbe>(
      [](const v1::HostProbe& probe) { return FleetProbeToText(FleetRows(probe, "\xe2\x80\xae")); }, Unshaped));
}

TEST(HostileOutput, Top) {
  auto render = [](const v1::HealthSnapshot& health) {
    v1::ListJobsResponse jobs = Filled<v1::ListJobsResponse>(health.gpu_error(), Unshaped);
    TopNode reached{"n1", health, jobs, "", true};
    TopNode jobs_unread{"n2", health, std::nullopt, health.gpu_error(), true};
    TopNode down{"n3", std::nullopt, std::nullopt, health.gpu_error(), false};
    return TopToText({reached, jobs_unread, down}, kNow);
  };
  EXPECT_TRUE(SafeFor<v1::HealthSnapshot>(render, Unshaped));
}

// JSON escapes what JSON must; C1 and bidi characters may stay (they are
// valid JSON and valid UTF-8), but the output stays one line, parses, and
// holds no raw C0 control or ill-formed UTF-8.
::testing::AssertionResult JsonLine(const nlohmann::json& json) {
  std::string line = DumpJson(json, -1);
  if (!IsValidUtf8(line)) return ::testing::AssertionFailure() << "ill-formed UTF-8: " << line;
  for (char c : line) {
    if (static_cast<unsigned char>(c) < 0x20) return ::testing::AssertionFailure() << "raw control: " << line;
  }
  if (nlohmann::json::parse(line, nullptr, false).is_discarded()) {
    return ::testing::AssertionFailure() << "does not parse: " << line;
  }
  return ::testing::AssertionSuccess();
}

TEST(HostileOutput, JsonStaysJson) {
  const std::string h = HostileText();
  EXPECT_TRUE(JsonLine(JobToJson(Filled<v1::Job>(h, FailedBuildAfterOom), kNow)));
  EXPECT_TRUE(JsonLine(JobListToJson(Filled<v1::ListJobsResponse>(h, Unshaped), kNow)));
  EXPECT_TRUE(JsonLine(AgentEventToJson(Filled<v1::AgentEvent>(h, Unshaped))));
  EXPECT_TRUE(JsonLine(HealthToJson(Filled<v1::HealthSnapshot>(h, Unshaped))));
  EXPECT_TRUE(JsonLine(ProbeToJson(Filled<v1::HostProbe>(h, Unshaped))));
  EXPECT_TRUE(JsonLine(ProvisionEventToJson(Filled<v1::ProvisionEvent>(h, Unshaped))));
  TopNode node{"n1", Filled<v1::HealthSnapshot>(h, Unshaped), Filled<v1::ListJobsResponse>(h, Unshaped), h, true};
  EXPECT_TRUE(JsonLine(TopToJson({node}, kNow)));
  // And the text survives, to the last valid character: a script sees what
  // the job printed.
  v1::AgentEvent e;
  e.set_message("a\x1b[2J\xc2\x9b\xe2\x80\xae");
  EXPECT_EQ(nlohmann::json::parse(DumpJson(AgentEventToJson(e)))["message"], "a\x1b[2J\xc2\x9b\xe2\x80\xae");
}

}  // namespace
}  // namespace gpuctl::client
