// GpuReader over NVML, loaded at run time with dlopen so gpuctld starts (and
// reports "no driver") on hosts without one, and never links against a
// particular driver's library. The library stays loaded and initialised for
// the reader's life; the destructor shuts NVML down.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <string_view>

#include "agents/sys/gpu_reader.h"
#include "common/status.h"

namespace gpuctl::sys {

// What nvidia-smi prints when the loaded kernel module and the user-space
// library differ (NVML_ERROR_LIB_RM_VERSION_MISMATCH); gpuctl says the same.
inline constexpr std::string_view kNvmlVersionMismatch =
    "Failed to initialize NVML: Driver/library version mismatch";

// NVML gives pids only; this names them (empty when unknown).
using ProcessNameLookup = std::function<std::string(uint32_t pid)>;

// Reads /proc/<pid>/comm through HostFs rooted at `root`.
ProcessNameLookup ProcCommLookup(std::string root = "/");

struct NvmlLibrary;  // the dlopen handle and resolved entry points

class NvmlGpuReader : public GpuReader {
 public:
  // Loads `library` (a dlopen name or path) and calls nvmlInit_v2.
  // Errors: kNotFound when the library or one of its required entry points is
  // missing ("libnvidia-ml.so.1 not found"); kFailedPrecondition with
  // kNvmlVersionMismatch; kUnavailable for other init failures
  // ("Failed to initialize NVML: Driver Not Loaded").
  static Result<std::unique_ptr<NvmlGpuReader>> Open(const std::string& library,
                                                     ProcessNameLookup names = ProcCommLookup());
  ~NvmlGpuReader() override;
  NvmlGpuReader(const NvmlGpuReader&) = delete;
  NvmlGpuReader& operator=(const NvmlGpuReader&) = delete;

  // A value the GPU does not support (NVML_ERROR_NOT_SUPPORTED), or whose
  // entry point this driver lacks, leaves its field empty; other per-GPU
  // failures are listed in GpuReport::error. A GPU that answers
  // NVML_ERROR_GPU_IS_LOST is listed with lost = true, is named once in the
  // error, and is asked nothing more; its uuid, name, bus id and compute
  // capability are what an earlier Read of this reader saw at its index (NVML
  // stays initialised, so an index is the same GPU), else empty.
  GpuReport Read() override;

 private:
  NvmlGpuReader(std::unique_ptr<NvmlLibrary> lib, ProcessNameLookup names);

  std::unique_ptr<NvmlLibrary> lib_;
  ProcessNameLookup names_;
  std::map<uint32_t, GpuDevice> identities_;  // by index: the last reading that gave a uuid
};

}  // namespace gpuctl::sys
