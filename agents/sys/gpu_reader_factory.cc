// MakeGpuReader: decides once, at construction, which source to use.
//   1. NVML, when the library loads and nvmlInit_v2 succeeds;
//   2. nvidia-smi, when it is on PATH and a first query works;
//   3. otherwise a reader that always reports no GPUs and why, in words that
//      cover both attempts.
// A host without a driver is a normal state for the agent, not an error.
#include <cstdlib>

#include "agents/sys/command_runner.h"
#include "agents/sys/gpu_reader.h"
#include "agents/sys/nvidia_smi_gpu_reader.h"
#include "agents/sys/nvml_gpu_reader.h"

namespace gpuctl::sys {
namespace {

class NoGpuReader : public GpuReader {
 public:
  explicit NoGpuReader(std::string reason) : reason_(std::move(reason)) {}
  GpuReport Read() override {
    GpuReport report;
    report.error = reason_;
    return report;
  }

 private:
  std::string reason_;
};

}  // namespace

std::unique_ptr<GpuReader> MakeGpuReader(const GpuReaderOptions& options, CommandRunner& runner) {
  std::string nvml_reason = "NVML disabled";
  bool nvml_missing = false;
  bool version_mismatch = false;
  if (!options.nvml_library.empty()) {
    auto nvml = NvmlGpuReader::Open(options.nvml_library);
    if (nvml.ok()) return std::move(*nvml);
    nvml_reason = nvml.status().message();
    nvml_missing = nvml.status().code() == ErrorCode::kNotFound;
    version_mismatch = nvml_reason == kNvmlVersionMismatch;
  }

  std::string smi_reason = "nvidia-smi disabled";
  if (!options.nvidia_smi.empty()) {
    const char* path_env = std::getenv("PATH");
    std::string smi = FindExecutable(options.nvidia_smi, path_env != nullptr ? path_env : "");
    if (smi.empty()) {
      bool is_path = options.nvidia_smi.find('/') != std::string::npos;
      smi_reason = options.nvidia_smi + (is_path ? " not found or not executable" : " not on PATH");
    } else {
      auto reader = std::make_unique<NvidiaSmiGpuReader>(smi, runner);
      GpuReport probe = reader->Read();
      if (probe.source == GpuSourceKind::kNvidiaSmi) return reader;
      smi_reason = probe.error;
    }
  }

  // nvidia-smi goes through the same library, so after a mismatch it only
  // repeats it; the mismatch alone says what to fix (reboot, or reload the
  // nvidia kernel module after a driver upgrade).
  if (version_mismatch) return std::make_unique<NoGpuReader>(nvml_reason);
  std::string reason = nvml_reason + "; " + smi_reason;
  if (nvml_missing) reason = "no NVIDIA driver: " + reason;
  return std::make_unique<NoGpuReader>(reason);
}

}  // namespace gpuctl::sys
