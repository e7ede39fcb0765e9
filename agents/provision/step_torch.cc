// torch: PyTorch from the wheel index whose CUDA major matches the toolkit.
// A torch built for another major (the incident: cu128 with toolkit 13.1) is
// found by importing it and resolved by reinstalling from the matching index.
#include "agents/provision/cuda_toolkit.h"
#include "agents/provision/provision_options.h"
#include "agents/provision/steps.h"
#include "agents/provision/venv_python.h"

namespace gpuctl::provision {
namespace {

// The torch version is not in PyTorch's table, but --torch-index names a mirror.
constexpr std::string_view kMirrorTag = "--torch-index";

// The toolkit of a torch release's newest index, to suggest when none fits
// the one installed: 2.8 -> cu129 -> 12.9, 2.10 -> cu130 -> 13.0.
std::string ToolkitForNewestIndex(std::string_view torch_version) {
  std::optional<CudaVersion> newest;
  for (const std::string& tag : TorchIndexTags(torch_version)) {
    std::optional<CudaVersion> v = CudaVersionOfIndexTag(tag);
    if (v && (!newest || v->major > newest->major || (v->major == newest->major && v->minor > newest->minor))) newest = v;
  }
  return newest ? FormatCudaVersion(*newest) : FormatCudaVersion({13, 0});
}

class TorchStep final : public Step {
 public:
  explicit TorchStep(const StepContext& context) : context_(context) {}
  std::string Name() const override { return std::string(kStepTorch); }

  Result<StepCheck> Check() override {
    auto toolkit = ToolkitForBuilds(context_);
    if (!toolkit.ok()) return toolkit.status();
    if (!*toolkit) {
      return Refusal("no CUDA toolkit is installed to match torch to: add the cuda step (--steps cuda,torch --cuda " +
                     context_.options.cuda_version + ")");
    }
    toolkit_ = **toolkit;
    const std::string& torch_version = context_.options.torch_version;
    const bool pre_turing = AnyBeforeTuring(context_.facts.compute_capabilities);
    auto tag = TorchIndexTagFor(torch_version, toolkit_, pre_turing);
    if (!tag && !context_.options.torch_index.empty()) {
      tag = std::string(kMirrorTag);  // a mirror the user vouches for; the import check still compares CUDA majors
    }
    if (!tag) {
      std::string why = pre_turing && toolkit_.major >= 13
                            ? "a GPU here is older than Turing (compute capability below 7.5), which CUDA 13 "
                              "wheels do not support: install a CUDA 12 toolkit (--steps cuda --cuda 12.6) for the "
                              "cu126 index"
                            : TorchIndexChoices(torch_version) + ", none for a CUDA " + FormatCudaVersion(toolkit_) +
                                  " toolkit: choose a toolkit of one of those majors (--steps cuda --cuda " +
                                  ToolkitForNewestIndex(torch_version) + ") or another --torch";
      return Refusal("no PyTorch index fits torch " + torch_version + " with CUDA " + FormatCudaVersion(toolkit_) +
                     ": " + why);
    }
    tag_ = *tag;

    auto torch = ImportTorch(context_);
    if (!torch.ok()) return torch.status();
    StepCheck check;
    if (!*torch) {
      check.detail = "torch does not import in " + context_.options.venv_path;
      return check;
    }
    const TorchBuild& found = **torch;
    if (found.base_version != context_.options.torch_version) {
      check.detail = "torch " + found.version + " is installed, " + context_.options.torch_version + " wanted";
      reinstall_ = true;
      return check;
    }
    if (!found.cuda || found.cuda->major != toolkit_.major) {
      check.detail = TorchMismatchMessage(found, toolkit_);
      check.notes.push_back("resolving the mismatch: reinstalling torch " + context_.options.torch_version +
                            " from the " + tag_ + " index (CUDA major " + std::to_string(toolkit_.major) + ")");
      reinstall_ = true;
      return check;
    }
    check.done = true;
    check.detail = "torch " + found.version + " imports, built for CUDA " + FormatCudaVersion(*found.cuda) +
                   " (toolkit " + FormatCudaVersion(toolkit_) + ")";
    return check;
  }

  Result<StepPlan> Plan(const StepCheck&) override {
    StepPlan plan;
    StepAction install;
    install.argv = {"uv", "pip", "install", "--python", VenvPython(context_.options)};
    if (reinstall_) install.argv.emplace_back("--reinstall");
    install.argv.push_back("torch==" + context_.options.torch_version);
    install.argv.emplace_back("--index-url");
    const std::string& mirror = context_.options.torch_index;
    install.argv.push_back(mirror.empty() ? TorchIndexUrl(tag_) : mirror);
    plan.actions.push_back(install);
    plan.notes.push_back(mirror.empty() ? "index " + tag_ + " for CUDA toolkit " + FormatCudaVersion(toolkit_)
                                        : "index " + mirror + " (--torch-index) for CUDA toolkit " +
                                              FormatCudaVersion(toolkit_) +
                                              (tag_ == kMirrorTag ? "" : "; PyTorch's own would be " + tag_));
    if (IsPlainHttp(mirror)) {
      plan.notes.push_back("INSECURE: the index is plain HTTP (--allow-insecure-index): anyone on the network path "
                           "can change the torch installed here as root");
    }
    return plan;
  }

 private:
  const StepContext& context_;
  CudaVersion toolkit_;
  std::string tag_;
  bool reinstall_ = false;
};

}  // namespace

std::unique_ptr<Step> MakeTorchStep(const StepContext& context) { return std::make_unique<TorchStep>(context); }

}  // namespace gpuctl::provision
