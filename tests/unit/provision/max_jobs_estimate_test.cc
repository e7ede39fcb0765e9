#include "agents/provision/max_jobs_estimate.h"
#include "common/units.h"

#include <gtest/gtest.h>

namespace gpuctl::provision {
namespace {


TEST(ArchFromComputeCapability, DropsTheDotAndKeepsASuffix) {
  EXPECT_EQ(ArchFromComputeCapability("9.0").value_or(""), "90");
  EXPECT_EQ(ArchFromComputeCapability("12.0").value_or(""), "120");
  EXPECT_EQ(ArchFromComputeCapability("8.6").value_or(""), "86");
  EXPECT_EQ(ArchFromComputeCapability("9.0a").value_or(""), "90a");
  for (const char* bad : {"", "9", "9.", ".0", "x.0", "9.0AB", "9.x"}) {
    EXPECT_FALSE(ArchFromComputeCapability(bad).ok()) << bad;
  }
}

TEST(TorchArchFromArch, PutsTheDotBeforeTheLastDigit) {
  EXPECT_EQ(TorchArchFromArch("90").value_or(""), "9.0");
  EXPECT_EQ(TorchArchFromArch("100").value_or(""), "10.0");
  EXPECT_EQ(TorchArchFromArch("120").value_or(""), "12.0");
  EXPECT_EQ(TorchArchFromArch("90a").value_or(""), "9.0a");
  for (const char* bad : {"", "9", "sm_90", "90ab", "9.0", "90A"}) EXPECT_FALSE(TorchArchFromArch(bad).ok()) << bad;
}

TEST(PredictedJobBytes, GrowsWithTheThreadsInFlightNotPastTheArchCount) {
  EXPECT_EQ(PredictedJobBytes(6 * kGiB, 4, 1), 6 * kGiB);
  EXPECT_EQ(PredictedJobBytes(6 * kGiB, 2, 2), 12 * kGiB);
  EXPECT_EQ(PredictedJobBytes(6 * kGiB, 1, 5), 6 * kGiB);
  EXPECT_EQ(PredictedJobBytes(6 * kGiB, 8, 5), 30 * kGiB);
}

TEST(EstimateMaxJobs, MemoryBoundFlashAttnDefaults) {
  MaxJobsInput input{.archs = kFlashAttnDefaultArchs, .nvcc_threads = 4,
                           .peak_one_arch_bytes = 5 * kGiB + kGiB / 2, .available_bytes = 100 * kGiB,
                           .reserve_bytes = 4 * kGiB, .cpus = 16};
  auto budget = EstimateMaxJobs(input);
  ASSERT_TRUE(budget.ok()) << budget.status().ToString();
  EXPECT_EQ(budget->per_job_bytes, 22 * kGiB);
  EXPECT_EQ(budget->budget_bytes, 96 * kGiB);
  EXPECT_EQ(budget->threads_per_job, 4u);
  EXPECT_EQ(budget->max_jobs, 4u);  // 96 / 22 = 4, 16 CPUs / 4 = 4
  EXPECT_TRUE(budget->fits);
  EXPECT_EQ(budget->explanation,
            "MAX_JOBS=4: 5.5 GiB per arch x min(4 threads, 5 archs) = 22.0 GiB per job; 100.0 GiB available - "
            "4.0 GiB reserve = 96.0 GiB fits 4; 16 CPUs / 4 threads per job allow 4");
  EXPECT_EQ(budget->env.at("MAX_JOBS"), "4");
  EXPECT_EQ(budget->env.at("NVCC_THREADS"), "4");
  EXPECT_EQ(budget->env.at("FLASH_ATTN_CUDA_ARCHS"), "80;90;100;110;120");
  EXPECT_EQ(budget->env.at("TORCH_CUDA_ARCH_LIST"), "8.0;9.0;10.0;11.0;12.0");

  input.available_bytes = 70 * kGiB;  // 66 GiB budget: 3 jobs
  EXPECT_EQ(EstimateMaxJobs(input)->max_jobs, 3u);
}

TEST(EstimateMaxJobs, CpuBoundWhenMemoryIsPlenty) {
  MaxJobsInput input{.archs = {"90"}, .nvcc_threads = 4, .available_bytes = 1000 * kGiB,
                           .reserve_bytes = 8 * kGiB, .cpus = 16};
  auto budget = EstimateMaxJobs(input);
  ASSERT_TRUE(budget.ok());
  EXPECT_EQ(budget->threads_per_job, 1u);  // one arch: nvcc has one thing to do at a time
  EXPECT_EQ(budget->max_jobs, 16u);
  EXPECT_EQ(budget->env.at("FLASH_ATTN_CUDA_ARCHS"), "90");
  EXPECT_EQ(budget->env.at("TORCH_CUDA_ARCH_LIST"), "9.0");
  input.archs = {"90", "100", "90"};  // counted once each
  budget = EstimateMaxJobs(input);
  EXPECT_EQ(budget->threads_per_job, 2u);
  EXPECT_EQ(budget->max_jobs, 8u);
  EXPECT_EQ(budget->env.at("FLASH_ATTN_CUDA_ARCHS"), "90;100");
}

TEST(EstimateMaxJobs, OneJobEvenWhenNothingFitsAndSaysSo) {
  MaxJobsInput input{.archs = {"90", "100"}, .nvcc_threads = 2, .available_bytes = 10 * kGiB,
                           .reserve_bytes = 12 * kGiB, .cpus = 4};
  auto budget = EstimateMaxJobs(input);
  ASSERT_TRUE(budget.ok());
  EXPECT_EQ(budget->budget_bytes, 0u);
  EXPECT_EQ(budget->max_jobs, 1u);
  EXPECT_FALSE(budget->fits);
  EXPECT_NE(budget->explanation.find("not even one job fits"), std::string::npos) << budget->explanation;
}

TEST(EstimateMaxJobs, RefusesWhatCannotBePlanned) {
  MaxJobsInput good{.archs = {"90"}, .available_bytes = 64 * kGiB, .cpus = 8};
  ASSERT_TRUE(EstimateMaxJobs(good).ok());
  MaxJobsInput input = good;
  input.archs = {};
  EXPECT_FALSE(EstimateMaxJobs(input).ok());
  input = good;
  input.archs = {"sm_90"};
  EXPECT_FALSE(EstimateMaxJobs(input).ok());
  input = good;
  input.nvcc_threads = 0;
  EXPECT_FALSE(EstimateMaxJobs(input).ok());
  input = good;
  input.cpus = 0;
  EXPECT_FALSE(EstimateMaxJobs(input).ok());
  input = good;
  input.peak_one_arch_bytes = 0;
  EXPECT_FALSE(EstimateMaxJobs(input).ok());
}

}  // namespace
}  // namespace gpuctl::provision
