// The static MAX_JOBS estimate: how many CUDA-extension compile jobs a host
// could run at once without running out of memory, predicted from a model of
// nvcc's peak before the build starts. Not the build governor: that one
// (agents/build/build_governor_policy.h) watches a build's compiles live and
// pauses what does not fit. The ext step uses this estimate to refuse a build
// not even one compile of which fits, to lower NVCC_THREADS until one does,
// and to explain the numbers. Pure functions.
//
// The model: one nvcc job compiles its archs on min(NVCC_THREADS, archs)
// threads at once, and each thread in flight holds about one arch's worth of
// cicc/ptxas memory, so
//     per-job memory = peak_one_arch x min(NVCC_THREADS, archs)
//     MAX_JOBS = min( (available - reserve) / per-job,
//                     CPUs / min(NVCC_THREADS, archs) ),  at least 1.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "agents/build/cuda_arch.h"
#include "common/status.h"

namespace gpuctl::provision {

using build::ArchFromComputeCapability;
using build::kDefaultNvccThreads;
using build::kFlashAttnDefaultArchs;
using build::kNvccPeakOneArchBytes;
using build::TorchArchFromArch;

struct MaxJobsInput {
  std::vector<std::string> archs;        // {"90"}; duplicates are counted once
  uint32_t nvcc_threads = kDefaultNvccThreads;
  uint64_t peak_one_arch_bytes = kNvccPeakOneArchBytes;
  uint64_t available_bytes = 0;          // MemAvailable of the domain the build runs in
  uint64_t reserve_bytes = 0;            // the memory guard's kill line
  uint32_t cpus = 0;
};

struct MaxJobsEstimate {
  uint32_t max_jobs = 1;
  uint32_t nvcc_threads = kDefaultNvccThreads;
  uint32_t threads_per_job = 1;          // min(NVCC_THREADS, archs)
  uint64_t per_job_bytes = 0;
  uint64_t budget_bytes = 0;             // available - reserve (0 when below)
  // False when not even one job fits the budget: MAX_JOBS is still 1 (a build
  // needs one), and the caller should refuse or warn; the explanation says so.
  bool fits = true;
  // The numbers and why, for a person: "MAX_JOBS=3: 6.5 GiB per arch x
  // min(4 threads, 5 archs) = 26.0 GiB per job; 100.0 GiB available - 4.0 GiB
  // reserve = 96.0 GiB fits 3; 16 CPUs / 4 threads per job allow 4".
  std::string explanation;
  // MAX_JOBS, NVCC_THREADS, FLASH_ATTN_CUDA_ARCHS ("90;100"),
  // TORCH_CUDA_ARCH_LIST ("9.0;10.0").
  std::map<std::string, std::string> env;
};

// Errors: kInvalidArgument for no archs, a malformed arch, zero threads, zero
// CPUs or a zero per-arch peak.
Result<MaxJobsEstimate> EstimateMaxJobs(const MaxJobsInput& input);

// The model alone: peak_one_arch x min(nvcc_threads, archs).
uint64_t PredictedJobBytes(uint64_t peak_one_arch_bytes, uint32_t nvcc_threads, uint32_t archs);

}  // namespace gpuctl::provision
