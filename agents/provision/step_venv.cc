// venv: a uv-managed virtual environment with the requested Python. Done when
// its python runs.
#include "agents/provision/steps.h"
#include "agents/provision/venv_python.h"

namespace gpuctl::provision {
namespace {

class VenvStep final : public Step {
 public:
  explicit VenvStep(const StepContext& context) : context_(context) {}
  std::string Name() const override { return std::string(kStepVenv); }

  Result<StepCheck> Check() override {
    StepCheck check;
    const std::string python = VenvPython(context_.options);
    auto out = context_.target.RunCheck({python, "--version"}, context_.config.check_timeout);
    if (!out.ok() && out.status().code() != ErrorCode::kNotFound) return out.status();
    if (out.ok() && out->exit_code == 0) {
      check.done = true;
      std::string version = out->stdout_text.empty() ? out->stderr_text : out->stdout_text;
      while (!version.empty() && version.back() == '\n') version.pop_back();
      check.detail = context_.options.venv_path + " exists (" + version + ")";
    } else {
      check.detail = "no venv at " + context_.options.venv_path;
    }
    return check;
  }

  Result<StepPlan> Plan(const StepCheck&) override {
    StepPlan plan;
    StepAction create;
    create.argv = {"uv", "venv", context_.options.venv_path, "--python", context_.config.python_version};
    plan.actions.push_back(create);
    return plan;
  }

 private:
  const StepContext& context_;
};

}  // namespace

std::unique_ptr<Step> MakeVenvStep(const StepContext& context) { return std::make_unique<VenvStep>(context); }

}  // namespace gpuctl::provision
