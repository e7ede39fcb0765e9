#include "agents/build/build_spec.h"

#include <algorithm>

#include "agents/build/cuda_arch.h"
#include "agents/sys/text_fields.h"
#include "common/units.h"

namespace gpuctl::build {
namespace {
constexpr uint64_t kMinBudget = uint64_t{256} << 20;
}

Result<PreparedBuild> PrepareBuild(std::optional<uint64_t> mem_budget_bytes, uint32_t cpus,
                                   const std::vector<std::string>& archs, const BuildHostFacts& host) {
  PreparedBuild prepared;
  if (mem_budget_bytes) {
    if (*mem_budget_bytes < kMinBudget) {
      return InvalidArgument("--mem-budget " + FormatBytes(*mem_budget_bytes) + " is too small: a build needs " +
                             FormatBytes(kMinBudget) + " at least");
    }
    if (host.domain_total_bytes > 0 && *mem_budget_bytes > host.domain_total_bytes) {
      return InvalidArgument("--mem-budget " + FormatBytes(*mem_budget_bytes) + " is more than the " +
                             FormatBytes(host.domain_total_bytes) + " a job can have on this host");
    }
    prepared.budget_bytes = *mem_budget_bytes;
  } else {
    if (host.available_bytes <= host.reserve_bytes + kMinBudget) {
      return FailedPrecondition("only " + FormatBytes(host.available_bytes) + " is available and the guard keeps " +
                                FormatBytes(host.reserve_bytes) + ": free memory, or give --mem-budget");
    }
    prepared.budget_bytes = host.available_bytes - host.reserve_bytes;
  }
  if (host.cpus == 0) return FailedPrecondition("the agent sees no CPU it may use");
  if (cpus > host.cpus) {
    return InvalidArgument("--cpus " + std::to_string(cpus) + " is more than the " + std::to_string(host.cpus) +
                           " CPUs the agent may use");
  }
  const uint32_t use_cpus = cpus == 0 ? host.cpus : cpus;

  std::vector<std::string> build_archs;
  auto add = [&](const std::string& arch) {
    if (std::find(build_archs.begin(), build_archs.end(), arch) == build_archs.end()) build_archs.push_back(arch);
  };
  for (const std::string& capability : archs) {
    Result<std::string> arch = KnownArch(capability);
    if (!arch.ok()) return arch.status();
    add(*arch);
  }
  if (archs.empty()) {
    for (const std::string& capability : host.gpu_capabilities) {
      Result<std::string> arch = ArchFromComputeCapability(capability);
      if (arch.ok()) add(*arch);
    }
  }

  // nvcc compiles min(NVCC_THREADS, archs) archs at once, each on a core:
  // MAX_JOBS compiles keep the CPUs busy, and the governor keeps their
  // memory inside the budget.
  const uint32_t nvcc_threads =
      build_archs.empty() ? kDefaultNvccThreads
                          : std::min<uint32_t>(kDefaultNvccThreads, static_cast<uint32_t>(build_archs.size()));
  const uint32_t max_jobs = std::max(1u, use_cpus / nvcc_threads);
  prepared.env["MAX_JOBS"] = std::to_string(max_jobs);
  prepared.env["CMAKE_BUILD_PARALLEL_LEVEL"] = std::to_string(use_cpus);
  prepared.env["NVCC_THREADS"] = std::to_string(nvcc_threads);
  std::vector<std::string> torch_archs;
  for (const std::string& arch : build_archs) torch_archs.push_back(TorchArchFromArch(arch).value_or(arch));
  if (!build_archs.empty()) {
    prepared.env["TORCH_CUDA_ARCH_LIST"] = sys::Join(torch_archs, ";");
    prepared.env["FLASH_ATTN_CUDA_ARCHS"] = sys::Join(build_archs, ";");
  }
  prepared.summary = "budget " + FormatBytes(prepared.budget_bytes) + ", MAX_JOBS=" + std::to_string(max_jobs) +
                     " NVCC_THREADS=" + std::to_string(nvcc_threads) + " for " + std::to_string(use_cpus) + " CPUs, " +
                     (build_archs.empty() ? std::string("archs: the build's own default (no GPU seen, no --archs)")
                                          : "archs " + sys::Join(torch_archs, ";"));
  return prepared;
}

}  // namespace gpuctl::build
