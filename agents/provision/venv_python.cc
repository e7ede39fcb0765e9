#include "agents/provision/venv_python.h"

#include <sstream>

namespace gpuctl::provision {

std::string VenvPython(const ProvisionOptions& options) { return options.venv_path + "/bin/python"; }

std::optional<TorchBuild> ParseTorchImport(std::string_view line) {
  std::istringstream words{std::string(line)};
  std::string version, cuda;
  if (!(words >> version >> cuda)) return std::nullopt;
  if (version.empty() || !(version[0] >= '0' && version[0] <= '9')) return std::nullopt;
  TorchBuild torch;
  torch.version = version;
  torch.base_version = version.substr(0, version.find('+'));
  torch.cuda = ParseCudaVersion(cuda);  // "None" for a CPU build
  return torch;
}

Result<std::optional<TorchBuild>> ImportTorch(const StepContext& context) {
  auto out = context.target.RunCheck(
      {VenvPython(context.options), "-c", "import torch; print(torch.__version__, torch.version.cuda)"},
      context.config.check_timeout);
  if (!out.ok()) {
    if (out.status().code() == ErrorCode::kNotFound) return std::optional<TorchBuild>();
    return out.status();
  }
  if (out->exit_code != 0) return std::optional<TorchBuild>();
  return ParseTorchImport(out->stdout_text);
}

std::string TorchMismatchMessage(const TorchBuild& torch, CudaVersion toolkit) {
  std::string built = torch.cuda ? FormatCudaVersion(*torch.cuda) : "no CUDA";
  return "torch " + torch.version + " was built for CUDA " + built + " but the toolkit is " +
         FormatCudaVersion(toolkit) + ": extension builds fail with \"The detected CUDA version (" +
         FormatCudaVersion(toolkit) + ") mismatches the version that was used to compile PyTorch (" + built + ")\"";
}

}  // namespace gpuctl::provision
