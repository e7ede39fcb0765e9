// The seam to the GPU driver. Real readers: NvmlGpuReader (dlopen of
// libnvidia-ml.so.1) and NvidiaSmiGpuReader (the nvidia-smi CLI). Tests inject
// a fake NVML library path, or a stand-in nvidia-smi on PATH.
#pragma once

#include <memory>
#include <string>

#include "agents/sys/gpu_types.h"

namespace gpuctl::sys {

class CommandRunner;

class GpuReader {
 public:
  virtual ~GpuReader() = default;
  // Never fails: problems are reported in GpuReport::error with source kNone
  // (or with the devices that could be read). Must be safe to call from one
  // thread at a time; callers serialise.
  virtual GpuReport Read() = 0;
};

struct GpuReaderOptions {
  // dlopen name or absolute path of NVML. Empty disables NVML.
  std::string nvml_library = "libnvidia-ml.so.1";
  // nvidia-smi executable name (looked up on PATH) or absolute path. Empty
  // disables the fallback.
  std::string nvidia_smi = "nvidia-smi";
};

// NVML when it loads and initialises; otherwise nvidia-smi when found on PATH;
// otherwise a reader that reports no GPUs with the reason from both attempts.
// A driver/library version mismatch from NVML is reported as such.
std::unique_ptr<GpuReader> MakeGpuReader(const GpuReaderOptions& options, CommandRunner& runner);

}  // namespace gpuctl::sys
