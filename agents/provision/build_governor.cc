#include "agents/provision/build_governor.h"

#include <algorithm>
#include <cctype>

#include "agents/sys/text_fields.h"
#include "common/units.h"

namespace gpuctl::provision {
namespace {

bool IsDigit(char c) { return std::isdigit(static_cast<unsigned char>(c)) != 0; }
bool IsLower(char c) { return std::islower(static_cast<unsigned char>(c)) != 0; }

// Digits, then an optional single lower-case suffix ("a" arch-specific, "f"
// family), as nvcc's sm_90a / sm_100f spell them.
bool SplitArch(std::string_view arch, std::string_view& digits, std::string_view& suffix) {
  size_t n = 0;
  while (n < arch.size() && IsDigit(arch[n])) ++n;
  digits = arch.substr(0, n);
  suffix = arch.substr(n);
  return digits.size() >= 2 && suffix.size() <= 1 && (suffix.empty() || IsLower(suffix[0]));
}

using sys::Join;

std::vector<std::string> Distinct(const std::vector<std::string>& items) {
  std::vector<std::string> out;
  for (const std::string& item : items) {
    if (std::find(out.begin(), out.end(), item) == out.end()) out.push_back(item);
  }
  return out;
}

}  // namespace

Result<std::string> ArchFromComputeCapability(std::string_view capability) {
  size_t dot = capability.find('.');
  std::string_view major = capability.substr(0, dot);
  std::string_view rest = dot == std::string_view::npos ? std::string_view() : capability.substr(dot + 1);
  std::string_view minor_digits, suffix;
  bool minor_ok = rest.size() >= 1 && IsDigit(rest[0]);
  if (minor_ok) {
    minor_digits = rest.substr(0, 1);
    suffix = rest.substr(1);
  }
  bool major_ok = !major.empty() && std::all_of(major.begin(), major.end(), IsDigit);
  if (!major_ok || !minor_ok || suffix.size() > 1 || (!suffix.empty() && !IsLower(suffix[0]))) {
    return InvalidArgument("'" + std::string(capability) + "' is not a compute capability (MAJOR.MINOR, e.g. 9.0)");
  }
  return std::string(major) + std::string(minor_digits) + std::string(suffix);
}

Result<std::string> TorchArchFromArch(std::string_view arch) {
  std::string_view digits, suffix;
  if (!SplitArch(arch, digits, suffix)) {
    return InvalidArgument("'" + std::string(arch) +
                           "' is not a CUDA arch (digits like 90 or 100, optional suffix a/f)");
  }
  return std::string(digits.substr(0, digits.size() - 1)) + "." + std::string(digits.substr(digits.size() - 1)) +
         std::string(suffix);
}

uint64_t PredictedJobBytes(uint64_t peak_one_arch_bytes, uint32_t nvcc_threads, uint32_t archs) {
  return peak_one_arch_bytes * std::min(nvcc_threads, archs);
}

Result<BuildBudget> PlanBuildBudget(const BuildGovernorInput& input) {
  std::vector<std::string> archs = Distinct(input.archs);
  if (archs.empty()) return InvalidArgument("build governor: no CUDA archs to build for");
  if (input.nvcc_threads == 0) return InvalidArgument("build governor: NVCC_THREADS must be at least 1");
  if (input.cpus == 0) return InvalidArgument("build governor: the CPU count is 0");
  if (input.peak_one_arch_bytes == 0) return InvalidArgument("build governor: the per-arch peak memory is 0");
  std::vector<std::string> torch_archs;
  for (const std::string& arch : archs) {
    Result<std::string> torch_arch = TorchArchFromArch(arch);
    if (!torch_arch.ok()) return torch_arch.status();
    torch_archs.push_back(*torch_arch);
  }

  BuildBudget budget;
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
