// What a `gpuctl build` job gets from the agent before it starts: its
// memory budget (its cgroup's limit, which the live governor keeps it
// inside) and the environment that sets a build's parallelism for the CPUs
// and its CUDA archs for the GPUs present. Pure: facts in, env out.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "common/status.h"

namespace gpuctl::build {

struct BuildHostFacts {
  uint32_t cpus = 0;                // the CPUs the agent may use
  uint64_t available_bytes = 0;     // MemAvailable now
  uint64_t reserve_bytes = 0;       // the memory guard's
  uint64_t domain_total_bytes = 0;  // the most a job may have (the guard's domain)
  std::vector<std::string> gpu_capabilities;  // "9.0" for each GPU present
};

struct PreparedBuild {
  uint64_t budget_bytes = 0;
  // MAX_JOBS, CMAKE_BUILD_PARALLEL_LEVEL, NVCC_THREADS, and when archs are
  // known TORCH_CUDA_ARCH_LIST ("8.0;9.0") and FLASH_ATTN_CUDA_ARCHS ("80;90").
  std::map<std::string, std::string> env;
  std::string summary;  // the figures, for the job's first event
};

// `archs`: compute capabilities from --archs; empty: the GPUs'. Errors:
// kInvalidArgument (exit 2, nothing started) for an unknown arch, a budget
// below 256 MiB or above the domain, more CPUs than the host has;
// kFailedPrecondition when no budget was given and available memory is not
// above the guard's reserve.
Result<PreparedBuild> PrepareBuild(std::optional<uint64_t> mem_budget_bytes, uint32_t cpus,
                                   const std::vector<std::string>& archs, const BuildHostFacts& host);

}  // namespace gpuctl::build
