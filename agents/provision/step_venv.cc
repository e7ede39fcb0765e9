// venv: a uv virtual environment, on the system's Python when PyTorch
// supports it (no download), else on one uv downloads. Done when its python
// runs.
#include "agents/provision/steps.h"
#include "agents/provision/venv_choice.h"
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
    const std::string& venv = context_.options.venv_path;
    if (std::optional<std::string> system = UsableSystemPython(context_.facts.system_python)) {
      // No download: hosts often have no route to where uv fetches Pythons.
      create.argv = {"uv", "venv", venv, "--python", *system, "--python-preference", "only-system"};
      plan.notes.push_back("the system's Python " + *system + " (no download)");
    } else {
      // uv downloads one; into a directory beside the venv rather than
      // root's home, so that the users who run jobs can read it.
      const std::string pythons = ManagedPythonDir(venv);
      create.argv = {"uv", "venv", venv, "--python", context_.config.python_version, "--python-preference", "managed"};
      create.env["UV_PYTHON_INSTALL_DIR"] = pythons;
      plan.notes.push_back("no usable system python3" +
                           (context_.facts.system_python.empty() ? std::string()
                                                                 : " (" + context_.facts.system_python + ")") +
                           ": uv downloads Python " + context_.config.python_version + " into " + pythons +
                           " (needs the network)");
    }
    plan.actions.push_back(create);
    return plan;
  }

 private:
  const StepContext& context_;
};

}  // namespace

std::unique_ptr<Step> MakeVenvStep(const StepContext& context) { return std::make_unique<VenvStep>(context); }

}  // namespace gpuctl::provision
