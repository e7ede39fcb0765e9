// uv, the system python3, and each venv's PyTorch with the CUDA it was built
// for (the incident: torch built for CUDA 12.8 beside a 13.1 toolkit).
#include <algorithm>

#include "agents/provision/probe_context.h"
#include "agents/provision/probe_versions.h"
#include "agents/sys/files.h"

namespace gpuctl::provision {
namespace {

void ProbeUv(ProbeContext& ctx) {
  // uv's installer puts it in ~/.local/bin, which a service's PATH lacks.
  std::vector<std::string> candidates = {"uv"};
  if (!ctx.options.home_dir.empty()) candidates.push_back(ctx.fs.Path(ctx.options.home_dir + "/.local/bin/uv"));
  for (const std::string& uv : candidates) {
    if (uv != "uv" && !sys::IsExecutableFile(uv)) continue;
    std::optional<sys::CommandOutput> out = ctx.Run({uv, "--version"}, ProbeContext::NoteFailure::kUnlessMissing);
    if (!out) continue;
    ctx.probe.uv_version = ParseUvVersion(out->stdout_text).value_or("");
    if (!ctx.probe.uv_version.empty()) return;
    ctx.Note("'" + uv + " --version' printed no version");
  }
  ctx.Note("uv not found (on PATH or in ~/.local/bin)");
}

void ProbeSystemPython(ProbeContext& ctx) {
  std::optional<sys::CommandOutput> out = ctx.Run({"python3", "--version"}, ProbeContext::NoteFailure::kUnlessMissing);
  if (!out) {
    ctx.Note("python3 not found");
    return;
  }
  ctx.probe.python_version = ParsePythonVersion(out->stdout_text + "\n" + out->stderr_text).value_or("");
  if (ctx.probe.python_version.empty()) ctx.Note("'python3 --version' printed no version");
}

std::vector<std::string> VenvsToProbe(const ProbeOptions& options) {
  std::vector<std::string> venvs = options.venvs;
  std::vector<std::string> defaults = options.default_venvs;
  if (!options.home_dir.empty()) {
    defaults.push_back(options.home_dir + "/.venv");
    defaults.push_back(options.home_dir + "/venv");
  }
  for (const std::string& venv : defaults) {
    if (std::find(venvs.begin(), venvs.end(), venv) == venvs.end()) venvs.push_back(venv);
  }
  return venvs;
}

void ProbeVenv(ProbeContext& ctx, const std::string& venv, bool requested) {
  std::string python = venv + "/bin/python";
  if (!sys::IsExecutableFile(ctx.fs.Path(python))) {
    if (requested) ctx.Note("venv " + venv + ": no executable bin/python");
    return;
  }
  PythonVenv found;
  found.path = venv;
  std::optional<sys::CommandOutput> out =
      ctx.Run({ctx.fs.Path(python), "-c", kTorchReportScript}, ProbeContext::NoteFailure::kAlways,
              ctx.options.python_timeout);
  if (out) {
    Result<TorchReport> report = ParseTorchReport(out->stdout_text);
    if (!report.ok()) {
      ctx.Note("venv " + venv + ": " + report.status().message());
    } else {
      found.python_version = report->python_version;
      found.torch_version = report->torch_version;
      found.torch_cuda = report->torch_cuda;
      if (!report->import_error.empty()) ctx.Note("venv " + venv + ": torch not importable: " + report->import_error);
    }
  }
  ctx.probe.venvs.push_back(std::move(found));
}

}  // namespace

void ProbePython(ProbeContext& ctx) {
  ProbeUv(ctx);
  ProbeSystemPython(ctx);
  for (const std::string& venv : VenvsToProbe(ctx.options)) {
    bool requested = std::find(ctx.options.venvs.begin(), ctx.options.venvs.end(), venv) != ctx.options.venvs.end();
    ProbeVenv(ctx, venv, requested);
  }
}

}  // namespace gpuctl::provision
