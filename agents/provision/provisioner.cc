#include "agents/provision/provisioner.h"

#include <set>

#include <spdlog/spdlog.h>

#include "agents/provision/action_executor.h"
#include "agents/provision/provision_state.h"
#include "agents/provision/steps.h"
#include "agents/sys/files.h"
#include "agents/sys/host_fs.h"

namespace gpuctl::provision {
namespace {

std::string RootfsFor(const ProvisionConfig& config, const std::string& vmid) {
  std::string path = config.lxc_rootfs_template;
  size_t at = path.find("{vmid}");
  if (at != std::string::npos) path.replace(at, 6, vmid);
  return path;
}

std::vector<std::unique_ptr<Step>> BuildSteps(const StepContext& context) {
  std::vector<std::unique_ptr<Step>> steps;
  if (context.target.in_container()) steps.push_back(MakePassthroughStep(context));
  for (const std::string& name : context.options.steps) {
    if (name == kStepDriver) steps.push_back(MakeDriverStep(context));
    if (name == kStepCuda) steps.push_back(MakeCudaStep(context));
    if (name == kStepVenv) steps.push_back(MakeVenvStep(context));
    if (name == kStepTorch) steps.push_back(MakeTorchStep(context));
    if (name == kStepExt) steps.push_back(MakeExtStep(context));
  }
  return steps;
}

// Tracks the run's reports, the state file and the summary together.
class RunRecorder {
 public:
  RunRecorder(const StepReportSink& sink, const sys::Clock& clock, std::string state_path, bool dry_run,
              ProvisionState state)
      : sink_(sink), clock_(clock), state_path_(std::move(state_path)), state_(std::move(state)) {
    result_.dry_run = dry_run;
    result_.state_file = state_path_;
  }

  void Report(StepReport report) {
    if (sink_) sink_(report);
    bool found = false;
    for (auto& last : result_.steps) {
      if (last.step == report.step) {
        last = report;
        found = true;
      }
    }
    if (!found) result_.steps.push_back(report);
    if (report.phase == StepPhase::kFailed) {
      result_.failed_step = report.step;
      result_.refused = report.failure && report.failure->refused;
    }
    if (result_.dry_run) return;  // a dry run changes nothing, the state file included
    int64_t now = WallMs();
    state_.steps[report.step] = StepRecord{StepPhaseName(report.phase), report.detail, now};
    state_.updated_unix_ms = now;
    if (report.phase == StepPhase::kFailed) {
      state_.failed_step = report.step;
      state_.failure = report.failure;
    } else if (report.step == state_.failed_step && report.phase != StepPhase::kPlanned &&
               report.phase != StepPhase::kRunning) {
      state_.failed_step.clear();
      state_.failure.reset();
    }
    if (Status s = SaveProvisionState(state_path_, state_); !s.ok()) {
      spdlog::warn("provision: cannot save {}: {}", state_path_, s.ToString());
    }
  }

  void NotReached(const std::string& step) {
    for (const auto& last : result_.steps) {
      if (last.step == step) return;
    }
    StepReport report;
    report.step = step;
    report.detail = "not reached";
    result_.steps.push_back(report);
  }

  ProvisionResult& result() { return result_; }
  int64_t WallMs() const {
    return std::chrono::duration_cast<std::chrono::milliseconds>(clock_.WallNow().time_since_epoch()).count();
  }

 private:
  const StepReportSink& sink_;
  const sys::Clock& clock_;
  std::string state_path_;
  ProvisionState state_;
  ProvisionResult result_;
};

int64_t MsSince(const sys::Clock& clock, std::chrono::steady_clock::time_point start) {
  return std::chrono::duration_cast<std::chrono::milliseconds>(clock.SteadyNow() - start).count();
}

StepFailure FailureFromStatus(const Status& status) {
  StepFailure failure;
  failure.message = status.message();
  failure.refused = status.code() == ErrorCode::kFailedPrecondition;
  return failure;
}

}  // namespace

Provisioner::Provisioner(ProvisionConfig config, sys::CommandRunner& runner, const sys::Clock& clock,
                         GuardedBuildRunner* builds, FactsSource facts)
    : config_(std::move(config)), runner_(runner), clock_(clock), builds_(builds), facts_(std::move(facts)) {}

Result<ProvisionResult> Provisioner::Run(const ProvisionOptions& requested, const StepReportSink& sink,
                                         const std::atomic<bool>* cancel) {
  auto normalized = NormalizeOptions(requested, config_);
  if (!normalized.ok()) return normalized.status();
  const ProvisionOptions& options = *normalized;
  std::unique_lock run_lock(run_mutex_, std::try_to_lock);
  if (stopping_) return Unavailable("the agent is shutting down");
  if (!run_lock.owns_lock()) {
    return Status(ErrorCode::kAlreadyExists, "a provisioning run is already in progress on this agent; wait for it to end");
  }
  const auto start = clock_.SteadyNow();
  auto cancelled = [this, cancel] { return stopping_.load() || (cancel != nullptr && cancel->load()); };

  const std::string state_path = ProvisionStatePath(config_.state_dir);
  auto previous = LoadProvisionState(state_path);
  if (!previous.ok()) spdlog::warn("provision: starting afresh: {}", previous.status().ToString());
  ProvisionState state = previous.ok() ? *previous : ProvisionState{};
  const std::string resume_step = state.container == options.container ? state.failed_step : std::string();
  const std::optional<StepFailure> resume_failure = state.failure;
  state.container = options.container;

  PlanFacts facts = facts_();
  std::string files_root = config_.system_root;
  std::string download_dir = config_.state_dir + "/provision";
  if (!options.container.empty()) {
    files_root = RootfsFor(config_, options.container);
    facts = ContainerFacts(facts, sys::HostFs(files_root));
    download_dir = "/tmp";
  } else if (!options.dry_run) {
    if (Status s = sys::EnsureDir(download_dir, 0700); !s.ok()) return s;
  }
  StepTarget target(runner_, files_root, options.container, config_.pct);
  StepContext context{target, facts, options, config_, builds_, download_dir};

  RunRecorder recorder(sink, clock_, state_path, options.dry_run, std::move(state));
  ProvisionResult& result = recorder.result();
  auto steps = BuildSteps(context);
  std::set<std::vector<std::string>> planned_in_dry_run;
  for (auto& step : steps) {
    const auto step_start = clock_.SteadyNow();
    StepReport report;
    report.step = step->Name();
    auto fail = [&](StepFailure failure, std::vector<std::string> notes) {
      report.phase = StepPhase::kFailed;
      report.detail = failure.message;
      report.failure = std::move(failure);
      report.notes = std::move(notes);
      report.elapsed_ms = MsSince(clock_, step_start);
      recorder.Report(report);
    };

    auto check = step->Check();
    if (!check.ok()) {
      fail(FailureFromStatus(check.status()), {});
      break;
    }
    if (check->reboot_required) result.reboot_required = true;
    if (check->done) {
      report.phase = StepPhase::kSkipped;
      report.detail = check->detail;
      report.notes = check->notes;
      report.elapsed_ms = MsSince(clock_, step_start);
      recorder.Report(report);
      continue;
    }
    auto plan = step->Plan(*check);
    if (!plan.ok()) {
      fail(FailureFromStatus(plan.status()), check->notes);
      break;
    }
    report.phase = StepPhase::kPlanned;
    report.detail = check->detail;
    report.notes = check->notes;
    report.notes.insert(report.notes.end(), plan->notes.begin(), plan->notes.end());
    if (report.step == resume_step && resume_failure) {
      report.notes.push_back("resuming here: the last run stopped at this step (" + resume_failure->message + ")");
    }
    if (options.dry_run) {
      // Nothing ran, so a later step still sees what an earlier one would
      // have done (the CUDA repository): show each command once.
      size_t before = plan->actions.size();
      std::erase_if(plan->actions, [&](const StepAction& action) {
        return action.write_path.empty() && !planned_in_dry_run.insert(action.argv).second;
      });
      if (plan->actions.size() != before) report.notes.push_back("commands planned by an earlier step are not repeated");
    }
    for (const StepAction& action : plan->actions) report.commands.push_back(DescribeAction(context, action));
    recorder.Report(report);
    if (options.dry_run) continue;

    const std::vector<std::string> planned_notes = report.notes;
    report.commands.clear();
    report.notes.clear();
    report.phase = StepPhase::kRunning;
    recorder.Report(report);
    if (auto failure = ExecuteActions(context, plan->actions, cancelled)) {
      fail(std::move(*failure), planned_notes);
      break;
    }
    auto verify = step->Check();
    if (!verify.ok()) {
      fail(FailureFromStatus(verify.status()), planned_notes);
      break;
    }
    if (!verify->done) {
      StepFailure failure;
      failure.message = "applied, but the check still finds it not done: " + verify->detail;
      fail(std::move(failure), planned_notes);
      break;
    }
    if (verify->reboot_required) result.reboot_required = true;
    report.phase = StepPhase::kDone;
    report.detail = verify->detail;
    report.notes = verify->notes;
    report.notes.insert(report.notes.end(), plan->notes.begin(), plan->notes.end());
    report.elapsed_ms = MsSince(clock_, step_start);
    recorder.Report(report);
  }
  for (auto& step : steps) recorder.NotReached(step->Name());
  result.ok = result.failed_step.empty();
  result.elapsed_ms = MsSince(clock_, start);
  return std::move(result);
}

bool Provisioner::StopAndWait(std::chrono::milliseconds wait) {
  stopping_ = true;
  std::unique_lock idle(run_mutex_, std::defer_lock);
  return idle.try_lock_for(wait);
}

}  // namespace gpuctl::provision
