#include "agents/provision/max_jobs_estimate.h"

#include <algorithm>

#include "agents/sys/text_fields.h"
#include "common/units.h"

namespace gpuctl::provision {
namespace {

using sys::Join;

std::vector<std::string> Distinct(const std::vector<std::string>& items) {
  std::vector<std::string> out;
  for (const std::string& item : items) {
    if (std::find(out.begin(), out.end(), item) == out.end()) out.push_back(item);
  }
  return out;
}

}  // namespace

uint64_t PredictedJobBytes(uint64_t peak_one_arch_bytes, uint32_t nvcc_threads, uint32_t archs) {
  return peak_one_arch_bytes * std::min(nvcc_threads, archs);
}

Result<MaxJobsEstimate> EstimateMaxJobs(const MaxJobsInput& input) {
  std::vector<std::string> archs = Distinct(input.archs);
  if (archs.empty()) return InvalidArgument("MAX_JOBS estimate: no CUDA archs to build for");
  if (input.nvcc_threads == 0) return InvalidArgument("MAX_JOBS estimate: NVCC_THREADS must be at least 1");
  if (input.cpus == 0) return InvalidArgument("MAX_JOBS estimate: the CPU count is 0");
  if (input.peak_one_arch_bytes == 0) return InvalidArgument("MAX_JOBS estimate: the per-arch peak memory is 0");
  std::vector<std::string> torch_archs;
  for (const std::string& arch : archs) {
    Result<std::string> torch_arch = TorchArchFromArch(arch);
    if (!torch_arch.ok()) return torch_arch.status();
    torch_archs.push_back(*torch_arch);
  }

  MaxJobsEstimate budget;
  auto arch_count = static_cast<uint32_t>(archs.size());
  budget.nvcc_threads = input.nvcc_threads;
  budget.threads_per_job = std::min(input.nvcc_threads, arch_count);
  budget.per_job_bytes = PredictedJobBytes(input.peak_one_arch_bytes, input.nvcc_threads, arch_count);
  budget.budget_bytes = input.available_bytes > input.reserve_bytes ? input.available_bytes - input.reserve_bytes : 0;
  uint64_t by_memory = budget.budget_bytes / budget.per_job_bytes;
  uint32_t by_cpus = std::max(1u, input.cpus / budget.threads_per_job);
  budget.fits = by_memory >= 1;
  budget.max_jobs = static_cast<uint32_t>(std::clamp<uint64_t>(by_memory, 1, by_cpus));

  std::string& why = budget.explanation;
  why = "MAX_JOBS=" + std::to_string(budget.max_jobs) + ": " + FormatBytes(input.peak_one_arch_bytes) +
        " per arch x min(" + std::to_string(input.nvcc_threads) + " threads, " + std::to_string(arch_count) +
        " archs) = " + FormatBytes(budget.per_job_bytes) + " per job; " + FormatBytes(input.available_bytes) +
        " available - " + FormatBytes(input.reserve_bytes) + " reserve = " + FormatBytes(budget.budget_bytes) +
        " fits " + std::to_string(by_memory) + "; " + std::to_string(input.cpus) + " CPUs / " +
        std::to_string(budget.threads_per_job) + " threads per job allow " + std::to_string(by_cpus);
  if (!budget.fits) why += "; not even one job fits: free memory or build fewer archs (NVCC_THREADS=1 needs " +
                           FormatBytes(input.peak_one_arch_bytes) + ")";

  budget.env["MAX_JOBS"] = std::to_string(budget.max_jobs);
  budget.env["NVCC_THREADS"] = std::to_string(input.nvcc_threads);
  budget.env["FLASH_ATTN_CUDA_ARCHS"] = Join(archs, ";");
  budget.env["TORCH_CUDA_ARCH_LIST"] = Join(torch_archs, ";");
  return budget;
}

}  // namespace gpuctl::provision
