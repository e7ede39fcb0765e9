#include "agents/build/build_spec.h"
#include "common/units.h"

#include <gtest/gtest.h>

namespace gpuctl::build {
namespace {


BuildHostFacts Host() {
  return {.cpus = 16, .available_bytes = 100 * kGiB, .reserve_bytes = 4 * kGiB, .domain_total_bytes = 128 * kGiB,
          .gpu_capabilities = {"9.0", "9.0"}};
}

TEST(PrepareBuild, SetsParallelismForTheCpusAndArchsForTheGpus) {
  auto prepared = PrepareBuild(std::nullopt, 0, {}, Host());
  ASSERT_TRUE(prepared.ok()) << prepared.status().message();
  EXPECT_EQ(prepared->budget_bytes, 96 * kGiB);
  EXPECT_EQ(prepared->env.at("MAX_JOBS"), "16");  // one arch: one nvcc thread per compile
  EXPECT_EQ(prepared->env.at("NVCC_THREADS"), "1");
  EXPECT_EQ(prepared->env.at("CMAKE_BUILD_PARALLEL_LEVEL"), "16");
  EXPECT_EQ(prepared->env.at("TORCH_CUDA_ARCH_LIST"), "9.0");
  EXPECT_EQ(prepared->env.at("FLASH_ATTN_CUDA_ARCHS"), "90");
}

TEST(PrepareBuild, ArchsFromTheFlagWinAndSetTheThreads) {
  auto prepared = PrepareBuild(32 * kGiB, 8, {"8.0", "9.0a", "10.0", "12.0", "8.0"}, Host());
  ASSERT_TRUE(prepared.ok()) << prepared.status().message();
  EXPECT_EQ(prepared->budget_bytes, 32 * kGiB);
  EXPECT_EQ(prepared->env.at("NVCC_THREADS"), "4");
  EXPECT_EQ(prepared->env.at("MAX_JOBS"), "2");
  EXPECT_EQ(prepared->env.at("TORCH_CUDA_ARCH_LIST"), "8.0;9.0a;10.0;12.0");
  EXPECT_EQ(prepared->env.at("FLASH_ATTN_CUDA_ARCHS"), "80;90a;100;120");
}

TEST(PrepareBuild, WithoutGpusOrArchsTheBuildKeepsItsOwnArchs) {
  BuildHostFacts host = Host();
  host.gpu_capabilities.clear();
  auto prepared = PrepareBuild(std::nullopt, 0, {}, host);
  ASSERT_TRUE(prepared.ok());
  EXPECT_EQ(prepared->env.count("TORCH_CUDA_ARCH_LIST"), 0u);
  EXPECT_EQ(prepared->env.at("NVCC_THREADS"), "4");
  EXPECT_EQ(prepared->env.at("MAX_JOBS"), "4");
  EXPECT_NE(prepared->summary.find("the build's own default"), std::string::npos);
}

TEST(PrepareBuild, RefusesWhatCannotWork) {
  EXPECT_EQ(PrepareBuild(129 * kGiB, 0, {}, Host()).status().code(), ErrorCode::kInvalidArgument);
  EXPECT_EQ(PrepareBuild(uint64_t{100} << 20, 0, {}, Host()).status().code(), ErrorCode::kInvalidArgument);
  EXPECT_EQ(PrepareBuild(std::nullopt, 17, {}, Host()).status().code(), ErrorCode::kInvalidArgument);
  for (const char* arch : {"9.5", "90", "sm_90", "", "13.0", "9.0x"}) {
    EXPECT_EQ(PrepareBuild(std::nullopt, 0, {arch}, Host()).status().code(), ErrorCode::kInvalidArgument) << arch;
  }
  BuildHostFacts full = Host();
  full.available_bytes = 4 * kGiB;
  EXPECT_EQ(PrepareBuild(std::nullopt, 0, {}, full).status().code(), ErrorCode::kFailedPrecondition);
  EXPECT_TRUE(PrepareBuild(2 * kGiB, 0, {}, full).ok()) << "an explicit budget is the user's call";
}

}  // namespace
}  // namespace gpuctl::build
