// ext: a CUDA extension (flash-attn) built from source against the venv's
// torch, for the archs of the GPUs present only, as a guarded build job so the
// live build governor keeps its compiles inside its budget and a runaway build
// is the one the memory guard kills. The static MAX_JOBS estimate only refuses
// a build not even one compile of which fits, or lowers NVCC_THREADS so one
// does; the build's limit and environment are prepared as every build job's
// are (build::PrepareBuild).
#include <algorithm>
#include <set>

#include "agents/build/build_spec.h"
#include "agents/provision/max_jobs_estimate.h"
#include "agents/provision/cuda_toolkit.h"
#include "agents/provision/steps.h"
#include "agents/provision/venv_python.h"
#include "agents/sys/text_fields.h"
#include "common/units.h"

namespace gpuctl::provision {
namespace {

std::string ModuleName(std::string ext) {
  for (char& c : ext) {
    if (c == '-') c = '_';
  }
  return ext;
}

class ExtStep final : public Step {
 public:
  explicit ExtStep(const StepContext& context) : context_(context) {}
  std::string Name() const override { return std::string(kStepExt); }

  Result<StepCheck> Check() override {
    const std::string module = ModuleName(context_.options.ext);
    auto out = context_.target.RunCheck(
        {VenvPython(context_.options), "-c", "import " + module + "; print(" + module + ".__version__)"},
        context_.config.check_timeout);
    if (!out.ok() && out.status().code() != ErrorCode::kNotFound) return out.status();
    StepCheck check;
    if (out.ok() && out->exit_code == 0) {
      std::string version = out->stdout_text;
      while (!version.empty() && version.back() == '\n') version.pop_back();
      check.done = true;
      check.detail = context_.options.ext + " " + version + " imports";
      return check;
    }
    check.detail = context_.options.ext + " does not import in " + context_.options.venv_path;
    return check;
  }

  Result<StepPlan> Plan(const StepCheck&) override {
    auto toolkit = ToolkitForBuilds(context_);
    if (!toolkit.ok()) return toolkit.status();
    if (!*toolkit) return Refusal("no CUDA toolkit is installed to build " + context_.options.ext + " with: add the cuda step");
    // torch must match the toolkit's major, else the build fails late with
    // PyTorch's mismatch error. The torch step, when in this run, fixes it first.
    if (!context_.Planned(kStepTorch)) {
      auto torch = ImportTorch(context_);
      if (!torch.ok()) return torch.status();
      if (!*torch) return Refusal("torch does not import in " + context_.options.venv_path + ": add the torch step");
      const TorchBuild& found = **torch;
      if (!found.cuda || found.cuda->major != (*toolkit)->major) {
        auto tag = TorchIndexTagFor(context_.options.torch_version, **toolkit,
                                    AnyBeforeTuring(context_.facts.compute_capabilities));
        std::string torch_cuda = found.cuda ? FormatCudaVersion(*found.cuda) : "12.8";
        return Refusal(TorchMismatchMessage(found, **toolkit) + ". Two ways out: install the toolkit torch was "
                       "built for (--steps cuda --cuda " + torch_cuda + "), or torch for the installed toolkit (--steps torch" +
                       (tag ? ", from the " + *tag + " index" : std::string()) + ")");
      }
    }

    MaxJobsInput input;
    std::set<std::string> archs;
    for (const std::string& capability : context_.facts.compute_capabilities) {
      auto arch = ArchFromComputeCapability(capability);
      if (arch.ok()) archs.insert(*arch);
    }
    StepPlan plan;
    if (archs.empty()) {
      input.archs = kFlashAttnDefaultArchs;
      plan.notes.push_back("no GPU seen: building flash-attn's default archs (slower, more memory)");
    } else {
      input.archs.assign(archs.begin(), archs.end());
    }
    input.available_bytes = context_.facts.mem_available_bytes;
    input.reserve_bytes = context_.config.guard_reserve_bytes;
    input.cpus = context_.facts.cpus;
    auto estimate = EstimateMaxJobs(input);
    if (!estimate.ok()) return estimate.status();
    // One compile must fit: with fewer archs at once (NVCC_THREADS) if need
    // be, before refusing.
    while (!estimate->fits && estimate->threads_per_job > 1) {
      input.nvcc_threads = estimate->threads_per_job - 1;
      estimate = EstimateMaxJobs(input);
      if (!estimate.ok()) return estimate.status();
      if (estimate->fits) {
        plan.notes.push_back("NVCC_THREADS=" + std::to_string(input.nvcc_threads) +
                             " so that one compile of all its archs fits the budget");
      }
    }
    if (!estimate->fits) {
      return Refusal("not even one compile job of " + context_.options.ext + " fits in memory: " +
                     estimate->explanation + ". Free memory (stop jobs) or add swap, then rerun");
    }
    // Prepared as every build job is (build::PrepareBuild, as for `gpuctl
    // build`): the budget is the memory available less the guard's reserve,
    // and the live governor keeps the compiles inside it, so MAX_JOBS is set
    // for the CPUs, not for the static estimate's peak.
    auto live = build::PrepareBuild(std::nullopt, 0, {}, ExtBuildFacts(input.archs));
    if (!live.ok()) return live.status();

    // --no-build-isolation builds against the venv's torch, so the venv needs
    // the build's own tools too: flash-attn's setup.py imports packaging and
    // psutil, and torch's BuildExtension compiles in parallel only with ninja.
    StepAction tools;
    tools.argv = {"uv", "pip", "install", "--python", VenvPython(context_.options), "setuptools", "wheel",
                  "packaging", "psutil", "ninja"};
    plan.actions.push_back(tools);

    StepAction build;
    const std::string& source = context_.options.ext_source;
    build.argv = {"uv", "pip", "install", "--python", VenvPython(context_.options), "--no-build-isolation",
                  source.empty() ? context_.options.ext : source};
    build.env = live->env;
    if (estimate->threads_per_job < sys::ToNumber<uint32_t>(build.env["NVCC_THREADS"]).value_or(1)) {
      // Fewer archs at once than the CPUs alone would give, so that one
      // compile fits: MAX_JOBS for the CPUs at that many threads a job.
      build.env["NVCC_THREADS"] = std::to_string(estimate->threads_per_job);
      build.env["MAX_JOBS"] = std::to_string(std::max(1u, context_.facts.cpus / estimate->threads_per_job));
    }
    plan.notes.push_back("governed live: budget " + FormatBytes(live->budget_bytes) + ", MAX_JOBS=" +
                         build.env["MAX_JOBS"] + " NVCC_THREADS=" + build.env["NVCC_THREADS"] + " for " +
                         std::to_string(context_.facts.cpus) + " CPUs (a static plan would allow " +
                         estimate->explanation + ")");
    build.env["CUDA_HOME"] = CudaHome(**toolkit);
    build.guarded = true;
    build.mem_limit_bytes = live->budget_bytes;
    build.timeout = context_.config.build_timeout;
    plan.actions.push_back(build);
    return plan;
  }

 private:
  // The host as a build job is prepared from: the probe's CPUs and available
  // memory, the guard's reserve, and the archs chosen above (spelled as
  // compute capabilities, in their order) standing for the GPUs.
  build::BuildHostFacts ExtBuildFacts(const std::vector<std::string>& archs) const {
    build::BuildHostFacts facts{.cpus = context_.facts.cpus,
                                .available_bytes = context_.facts.mem_available_bytes,
                                .reserve_bytes = context_.config.guard_reserve_bytes,
                                .gpu_capabilities = {}};
    for (const std::string& arch : archs) facts.gpu_capabilities.push_back(TorchArchFromArch(arch).value_or(arch));
    return facts;
  }

  const StepContext& context_;
};

}  // namespace

std::unique_ptr<Step> MakeExtStep(const StepContext& context) { return std::make_unique<ExtStep>(context); }

}  // namespace gpuctl::provision
