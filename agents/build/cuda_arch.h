// CUDA archs as builds spell them, and the memory one arch of one nvcc
// compile needs. Shared by the static MAX_JOBS estimate
// (provision/max_jobs_estimate.h) and the live governor
// (build_governor_policy.h).
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "common/status.h"

namespace gpuctl::build {

// Peak RSS of one arch of one job, calibrated on the real traces in
// ../shared/fixtures/gpu-host/nvcc-memtrace-*.csv (flash-attention 2 kernels,
// the heaviest files of the build). For each observed job, its peak divided
// by min(threads, archs) of its run; the worst of those is 6517 MiB
// (flash_bwd_hdim256, 1 arch, --threads 4; the 2-arch --threads 2 bwd256 job
// gives 13004 / 2 = 6502 MiB, the --threads 1 one 6494 MiB). Rounded up to
// 6.5 GiB so that every observed job fits its prediction with a little room.
// tests/unit/provision/max_jobs_estimate_trace_test.cc re-derives this from the
// traces and fails if the constant falls below it.
inline constexpr uint64_t kNvccPeakOneArchBytes = uint64_t{6656} << 20;  // 6.5 GiB

// flash-attn's own default when FLASH_ATTN_CUDA_ARCHS is unset.
inline const std::vector<std::string> kFlashAttnDefaultArchs = {"80", "90", "100", "110", "120"};

inline constexpr uint32_t kDefaultNvccThreads = 4;

// Compute capability to arch: "9.0" -> "90", "12.0" -> "120", "9.0a" -> "90a".
// Errors: kInvalidArgument for anything not MAJOR.MINOR[suffix].
Result<std::string> ArchFromComputeCapability(std::string_view capability);
// Arch to PyTorch's spelling: "90" -> "9.0", "100" -> "10.0", "90a" -> "9.0a".
// Errors: kInvalidArgument for anything not two or more digits and an
// optional letter suffix.
Result<std::string> TorchArchFromArch(std::string_view arch);
// A compute capability nvcc 12/13 can target ("8.0", "9.0a", "12.1f"), as
// given to `gpuctl build --archs`, to an arch ("80"). Errors:
// kInvalidArgument naming the known ones, for a malformed or unknown one.
Result<std::string> KnownArch(std::string_view capability);

}  // namespace gpuctl::build
