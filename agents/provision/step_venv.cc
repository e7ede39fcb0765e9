// venv: a uv virtual environment, on the system's Python when PyTorch
// supports it (no download), else on one uv downloads, with py-spy in it:
// hang dumps (`gpuctl train dump`, agents/train/stack_dump.cc) run
// VENV/bin/py-spy. Done when its python and its py-spy both run.
#include <optional>
#include <string>
#include <vector>

#include "agents/provision/steps.h"
#include "agents/sys/directory_listing.h"
#include "agents/sys/files.h"
#include "agents/provision/venv_choice.h"
#include "agents/provision/venv_python.h"

namespace gpuctl::provision {
namespace {

// The first line a `--version` printed ("Python 3.11.2", "py-spy 0.4.3");
// old Pythons print theirs on stderr.
std::string VersionLine(const sys::CommandOutput& out) {
  const std::string& text = out.stdout_text.empty() ? out.stderr_text : out.stdout_text;
  return text.substr(0, text.find('\n'));
}

class VenvStep final : public Step {
 public:
  explicit VenvStep(const StepContext& context) : context_(context) {}
  std::string Name() const override { return std::string(kStepVenv); }

  Result<StepCheck> Check() override {
    if (Status s = CheckTheDirectoryIsFree(); !s.ok()) return s;
    auto python = RunVersion(VenvPython(context_.options));
    if (!python.ok()) return python.status();
    auto py_spy = RunVersion(VenvPySpy());
    if (!py_spy.ok()) return py_spy.status();
    has_venv_ = python->has_value();
    has_py_spy_ = py_spy->has_value();
    StepCheck check;
    const std::string& venv = context_.options.venv_path;
    check.done = has_venv_ && has_py_spy_;
    if (!has_venv_) {
      check.detail = "no venv at " + venv;
    } else if (!has_py_spy_) {
      check.detail = venv + " exists (" + **python + "), but has no py-spy (hang dumps need it)";
    } else {
      check.detail = venv + " exists (" + **python + ", " + **py_spy + ")";
    }
    return check;
  }

  Result<StepPlan> Plan(const StepCheck&) override {
    StepPlan plan;
    if (!has_venv_) plan.actions.push_back(CreateVenv(plan.notes));
    if (!has_py_spy_) {
      // No index flag: uv takes its index from its configuration
      // (UV_DEFAULT_INDEX, uv.toml), which sites point where pip points.
      StepAction install;
      install.argv = {"uv", "pip", "install", "--python", VenvPython(context_.options), "py-spy"};
      plan.actions.push_back(install);
      plan.notes.push_back("py-spy (hang dumps: gpuctl train dump)");
    }
    return plan;
  }

 private:
  // uv venv writes bin/, lib/ and pyvenv.cfg into the directory as root:
  // only into a venv, an empty directory, or one that does not exist yet.
  Status CheckTheDirectoryIsFree() const {
    const std::string& venv = context_.options.venv_path;
    const std::string here = context_.target.HostPath(venv);
    if (!sys::PathExists(here)) return Status::Ok();
    if (!sys::IsDirectory(here)) return Refusal("--venv " + venv + " exists and is not a directory");
    if (sys::PathExists(here + "/pyvenv.cfg") || sys::ListDirectoryNames(here).empty()) return Status::Ok();
    return Refusal("--venv " + venv +
                   " is a directory with files in it and no pyvenv.cfg, so not a venv: the venv step would write "
                   "over them as root. Give a new or empty directory, or an existing venv");
  }

  std::string VenvPySpy() const { return context_.options.venv_path + "/bin/py-spy"; }

  // The version line of `program --version`; nullopt when it is absent or
  // fails (a venv whose Python was removed under it counts as absent too).
  Result<std::optional<std::string>> RunVersion(const std::string& program) const {
    auto out = context_.target.RunCheck({program, "--version"}, context_.config.check_timeout);
    if (!out.ok()) {
      if (out.status().code() == ErrorCode::kNotFound) return std::optional<std::string>();
      return out.status();
    }
    if (out->exit_code != 0) return std::optional<std::string>();
    return std::optional<std::string>(VersionLine(*out));
  }

  StepAction CreateVenv(std::vector<std::string>& notes) const {
    StepAction create;
    const std::string& venv = context_.options.venv_path;
    if (std::optional<std::string> system = UsableSystemPython(context_.facts.system_python)) {
      // No download: hosts often have no route to where uv fetches Pythons.
      create.argv = {"uv", "venv", venv, "--python", *system, "--python-preference", "only-system"};
      notes.push_back("the system's Python " + *system + " (no download)");
    } else {
      // uv downloads one; into a directory beside the venv rather than
      // root's home, so that the users who run jobs can read it.
      const std::string pythons = ManagedPythonDir(venv);
      create.argv = {"uv", "venv", venv, "--python", context_.config.python_version, "--python-preference", "managed"};
      create.env["UV_PYTHON_INSTALL_DIR"] = pythons;
      notes.push_back("no usable system python3" +
                      (context_.facts.system_python.empty() ? std::string()
                                                            : " (" + context_.facts.system_python + ")") +
                      ": uv downloads Python " + context_.config.python_version + " into " + pythons +
                      " (needs the network)");
    }
    return create;
  }

  const StepContext& context_;
  bool has_venv_ = false;
  bool has_py_spy_ = false;
};

}  // namespace

std::unique_ptr<Step> MakeVenvStep(const StepContext& context) { return std::make_unique<VenvStep>(context); }

}  // namespace gpuctl::provision
