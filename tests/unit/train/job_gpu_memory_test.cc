// A job's GPU memory from per-process readings: the real H200 capture
// (query-gpu.csv, query-apps.csv) and literals for two GPUs and two jobs.
#include "agents/train/job_gpu_memory.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "agents/sys/nvidia_smi_csv.h"
#include "tests/fakes/temp_dir.h"
#include "common/units.h"

namespace gpuctl::train {
namespace {


sys::GpuDevice Gpu(uint32_t index, uint64_t total_mib, std::vector<sys::GpuProcessInfo> processes) {
  sys::GpuDevice gpu;
  gpu.index = index;
  gpu.uuid = "GPU-" + std::to_string(index);
  gpu.memory_total_bytes = total_mib * kMiB;
  gpu.processes = std::move(processes);
  return gpu;
}

TEST(JobGpuMemory, TheRealCapturesProcessIsItsJobs) {
  auto gpus = sys::ParseGpuQueryCsv(testing::ReadFixture("query-gpu.csv"));
  auto apps = sys::ParseComputeAppsCsv(testing::ReadFixture("query-apps.csv"));
  ASSERT_TRUE(gpus.ok() && apps.ok());
  sys::AttachComputeApps(*gpus, *apps);
  auto uses = AttributeGpuMemory(*gpus, [](uint32_t pid) -> std::optional<std::string> {
    return pid == 479 ? std::optional<std::string>("dflash") : std::nullopt;
  });
  ASSERT_EQ(uses.size(), 1u);
  ASSERT_EQ(uses["dflash"].size(), 1u);
  const JobGpuMemory& m = uses["dflash"][0];
  EXPECT_EQ(m.index, 0u);
  EXPECT_EQ(m.uuid, "GPU-c6489789-7836-64bc-561f-33b9f6b86ea3");
  EXPECT_EQ(m.used_bytes, 20998 * kMiB);
  EXPECT_EQ(m.total_bytes, 143771 * kMiB);
}

TEST(JobGpuMemory, ProcessesAreSummedPerJobAndGpuAndStrangersAreLeftOut) {
  std::vector<sys::GpuDevice> gpus = {
      Gpu(0, 80000, {{100, "python", 30000 * kMiB}, {101, "python", 10000 * kMiB}, {900, "other", 5000 * kMiB}}),
      Gpu(1, 80000, {{100, "python", 20000 * kMiB}, {200, "python", 70000 * kMiB}})};
  auto uses = AttributeGpuMemory(gpus, [](uint32_t pid) -> std::optional<std::string> {
    if (pid == 100 || pid == 101) return "a";
    if (pid == 200) return "b";
    return std::nullopt;  // not a job's: another user's process
  });
  ASSERT_EQ(uses.size(), 2u);
  ASSERT_EQ(uses["a"].size(), 2u);
  EXPECT_EQ(uses["a"][0].used_bytes, 40000 * kMiB);
  EXPECT_EQ(uses["a"][1].used_bytes, 20000 * kMiB);
  ASSERT_EQ(uses["b"].size(), 1u);
  EXPECT_EQ(uses["b"][0].index, 1u);
}

TEST(JobGpuMemory, PeaksAreKeptAndHighFiresOncePerRun) {
  std::vector<JobGpuMemory> memory;
  auto reading = [](uint64_t used_mib) {
    return std::vector<JobGpuMemory>{{0, "GPU-0", used_mib * kMiB, 0, 100000 * kMiB, false}};
  };
  EXPECT_TRUE(UpdateGpuMemory(memory, reading(50000)).empty());
  std::vector<JobGpuMemory> high = UpdateGpuMemory(memory, reading(95000));  // exactly 95%
  ASSERT_EQ(high.size(), 1u);
  EXPECT_EQ(high[0].used_bytes, 95000 * kMiB);
  EXPECT_TRUE(UpdateGpuMemory(memory, reading(99000)).empty());  // once per run
  UpdateGpuMemory(memory, {});  // the process left the GPU
  ASSERT_EQ(memory.size(), 1u);
  EXPECT_EQ(memory[0].used_bytes, 0u);
  EXPECT_EQ(memory[0].peak_bytes, 99000 * kMiB);
  EXPECT_EQ(JobGpuMemoryFromJson(ToJson(memory[0])), memory[0]);
  std::vector<JobGpuMemory> below;
  EXPECT_TRUE(UpdateGpuMemory(below, reading(94999)).empty());
}

// A job's GPU processes are its cgroup's (a setsid'd worker too), or for a
// container job its container's, as the host names it.
TEST(JobGpuMemory, ProcessesAreAJobsByItsCgroupOrItsContainer) {
  EXPECT_TRUE(CgroupHolds("/gpuctl/a@r1", "/gpuctl/a@r1"));
  EXPECT_TRUE(CgroupHolds("/gpuctl/a@r1/worker", "/gpuctl/a@r1"));
  EXPECT_FALSE(CgroupHolds("/gpuctl/a@r10", "/gpuctl/a@r1"));
  EXPECT_FALSE(CgroupHolds("/gpuctl", "/gpuctl/a@r1"));
  EXPECT_FALSE(CgroupHolds("/gpuctl/a@r1", ""));
  EXPECT_TRUE(ContainerCgroupHolds("/lxc/200/ns/user.slice", "200"));
  EXPECT_TRUE(ContainerCgroupHolds("/lxc/200", "200"));
  EXPECT_TRUE(ContainerCgroupHolds("/lxc.payload.200/init.scope", "200"));
  EXPECT_FALSE(ContainerCgroupHolds("/lxc/2000/ns", "200"));
  EXPECT_FALSE(ContainerCgroupHolds("/lxc.payload.2001", "200"));
  EXPECT_FALSE(ContainerCgroupHolds("/user.slice/lxc200", "200"));
  EXPECT_FALSE(ContainerCgroupHolds("/lxc/200", ""));
}

}  // namespace
}  // namespace gpuctl::train
