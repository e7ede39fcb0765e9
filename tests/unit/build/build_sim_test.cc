#include "tests/sim/build_sim.h"

#include <fstream>
#include <set>
#include <sstream>

#include <gtest/gtest.h>

#include "agents/provision/nvcc_memtrace.h"
#include "common/units.h"

namespace gpuctl::sim {
namespace {


std::string ReadFixture(const std::string& name) {
  std::ifstream in(std::string(GPUCTL_FIXTURES_DIR) + "/" + name);
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

TEST(ProfilesFromTrace, ResamplesEachRealJobToTicksKeepingItsPeak) {
  std::string csv = ReadFixture("nvcc-memtrace-1arch-t4.csv");
  auto profiles = ProfilesFromTrace(csv);
  ASSERT_TRUE(profiles.ok()) << profiles.status().message();
  auto peaks = provision::PeakRssMibByJob(provision::ParseNvccMemtrace(csv).value());
  ASSERT_EQ(profiles->size(), peaks.size());
  for (const auto& [job, profile] : *profiles) {
    EXPECT_EQ(*std::max_element(profile.begin(), profile.end()), peaks.at(job) << 20) << job;
    // 105-120 s at four ticks a second.
    EXPECT_GT(profile.size(), 400u) << job;
    EXPECT_LT(profile.size(), 500u) << job;
  }
}

TEST(ComposeCompile, RunsArchsInWavesOfThreads) {
  ArchProfile lane = {1 * kGiB, 3 * kGiB, 1 * kGiB};
  SimCompile five = ComposeCompile("k.cu", lane, 5, 4);
  EXPECT_EQ(five.rss_bytes, (std::vector<uint64_t>{4 * kGiB, 12 * kGiB, 4 * kGiB, 1 * kGiB, 3 * kGiB, 1 * kGiB}));
  EXPECT_EQ(five.cores, (std::vector<uint32_t>{4, 4, 4, 1, 1, 1}));
  SimCompile one = ComposeCompile("k.cu", lane, 1, 4);
  EXPECT_EQ(one.rss_bytes, lane);
}

TEST(FlashAttnKernelFiles, AreFlashAttn28sSeventyTwoWithATraceEach) {
  std::vector<std::string> files = FlashAttnKernelFiles();
  EXPECT_EQ(files.size(), 72u);
  EXPECT_EQ(std::set<std::string>(files.begin(), files.end()).size(), 72u);
  EXPECT_EQ(files.front(), "flash_fwd_hdim32_fp16_sm80.cu");
  EXPECT_EQ(TraceJobFor("flash_bwd_hdim96_bf16_causal_sm80.cu"), "flash_bwd_hdim128_bf16_sm80");
  EXPECT_EQ(TraceJobFor("flash_fwd_split_hdim192_fp16_sm80.cu"), "flash_fwd_hdim256_bf16_sm80");
  EXPECT_EQ(TraceJobFor("flash_bwd_hdim32_fp16_sm80.cu"), "flash_bwd_hdim64_bf16_sm80");
}

TEST(ComputeLowerBound, IsTheLargestOfCpuMemoryAndTheLongestCompile) {
  SimHost host{.cores = 2, .available_bytes = 10 * kGiB, .reserve_bytes = 2 * kGiB};
  // Two compiles of 8 ticks on 1 core at 4 GiB: 4 s of CPU on 2 cores, 16
  // GiB-s in 8 GiB, 2 s long.
  SimCompile compile{.source = "a", .archs = 1, .threads = 1, .rss_bytes = std::vector<uint64_t>(8, 4 * kGiB),
                     .cores = std::vector<uint32_t>(8, 1)};
  LowerBound bound = ComputeLowerBound({compile, compile}, host);
  EXPECT_DOUBLE_EQ(bound.cpu_s, 2.0);
  EXPECT_DOUBLE_EQ(bound.memory_s, 2.0);
  EXPECT_DOUBLE_EQ(bound.longest_s, 2.0);
  EXPECT_DOUBLE_EQ(bound.bound_s(), 2.0);
}

TEST(Simulate, TwoCompilesThatFitOnlyOneAtATime) {
  // 12 GiB available: two 7 GiB peaks OOM together; the governor runs them
  // one after the other (it pauses the second before it grows).
  SimHost host{.cores = 4, .available_bytes = 12 * kGiB, .reserve_bytes = 1 * kGiB};
  SimCompile compile{.source = "", .archs = 1, .threads = 1, .rss_bytes = {}, .cores = std::vector<uint32_t>(40, 1)};
  for (int t = 0; t < 40; ++t) compile.rss_bytes.push_back(t < 20 ? kGiB / 4 + kGiB * static_cast<uint64_t>(t) / 3 : kGiB / 2);
  std::vector<SimCompile> compiles = {compile, compile};
  SimResult both = Simulate(compiles, host, {"MAX_JOBS=2", 2, false});
  EXPECT_TRUE(both.oom);
  SimResult governed = Simulate(compiles, host, {"governed", 2, true});
  EXPECT_FALSE(governed.oom);
  EXPECT_FALSE(governed.failed);
  EXPECT_LE(governed.peak_bytes, 11 * kGiB);
  EXPECT_GT(governed.paused_s, 0);
  EXPECT_EQ(governed.pauses, 1u);
  SimResult serial = Simulate(compiles, host, {"MAX_JOBS=1", 1, false});
  EXPECT_FALSE(serial.oom);
  EXPECT_LE(governed.makespan_s, serial.makespan_s) << "the second starts in the first's tail";
}

class IncidentHostTest : public ::testing::Test {
 protected:
  void SetUp() override {
    auto profiles = ProfilesFromTrace(ReadFixture("nvcc-memtrace-1arch-t4.csv"));
    ASSERT_TRUE(profiles.ok());
    profiles_ = std::move(*profiles);
  }
  SimResult Run(uint32_t archs, const std::string& label) {
    auto compiles = FlashAttnBuild(profiles_, archs, 4);
    EXPECT_TRUE(compiles.ok());
    for (const SimRun& run : IncidentRuns(IncidentHost(), archs, 4)) {
      if (run.label == label) return Simulate(*compiles, IncidentHost(), run);
    }
    ADD_FAILURE() << "no run " << label;
    return {};
  }
  std::map<std::string, ArchProfile> profiles_;
};

// The incident: five archs on NVCC_THREADS=4, 128 cores, 288 GiB.
TEST_F(IncidentHostTest, FiveArchsOomAtFixedJobsAndNotUnderTheGovernor) {
  for (const char* label : {"MAX_JOBS=128", "MAX_JOBS=64", "MAX_JOBS=32"}) EXPECT_TRUE(Run(5, label).oom) << label;
  SimResult governed = Run(5, "live governor");
  EXPECT_FALSE(governed.oom);
  EXPECT_FALSE(governed.failed);
  EXPECT_LE(governed.peak_bytes, IncidentHost().available_bytes - IncidentHost().reserve_bytes);
  SimResult fixed_model = Run(5, "static model");
  EXPECT_FALSE(fixed_model.oom);
  EXPECT_LT(governed.makespan_s, fixed_model.makespan_s);
}

TEST_F(IncidentHostTest, OneArchRunsEveryFileAtOnceWhereItFits) {
  EXPECT_TRUE(Run(1, "MAX_JOBS=128").oom);
  SimResult governed = Run(1, "live governor");
  EXPECT_FALSE(governed.oom);
  EXPECT_LT(governed.makespan_s, Run(1, "static model").makespan_s);
}

TEST_F(IncidentHostTest, TheClairvoyantScheduleNeverPassesTheBudget) {
  const uint64_t budget = IncidentHost().available_bytes - IncidentHost().reserve_bytes;
  for (uint32_t archs : {5u, 1u}) {
    SimResult clairvoyant = Run(archs, "clairvoyant");
    EXPECT_FALSE(clairvoyant.oom) << archs;
    EXPECT_FALSE(clairvoyant.failed) << archs;
    EXPECT_LE(clairvoyant.peak_bytes, budget) << archs;
    EXPECT_EQ(clairvoyant.pauses, 0u) << archs;
  }
}

}  // namespace
}  // namespace gpuctl::sim
