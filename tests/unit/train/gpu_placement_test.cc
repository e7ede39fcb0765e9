// The GPU queue's placement and order as pure functions: counts and lists,
// jobs and outside processes holding GPUs, memory asked for, and refusals.
#include "agents/train/gpu_placement.h"
#include "common/units.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

namespace gpuctl::train {
namespace {

using ::testing::ElementsAre;


std::vector<GpuSlot> FourH200s() {
  std::vector<GpuSlot> slots;
  for (uint32_t i = 0; i < 4; ++i) {
    slots.push_back({i, "GPU-" + std::to_string(i), 140 * kGiB, 140 * kGiB, {}, {}, {}});
  }
  return slots;
}

TEST(GpuPlacement, ACountTakesTheFirstFreeGpusInBusOrder) {
  std::vector<GpuSlot> slots = FourH200s();
  slots[0].held_by = "x";
  slots[1].foreign = {{1234, 40 * kGiB}};
  GpuPlacement p = PlaceJob({2, {}, std::nullopt}, slots, kGiB);
  EXPECT_THAT(p.gpus, ElementsAre(2, 3));
  EXPECT_EQ(VisibleDevices(p.gpus), "2,3");
}

TEST(GpuPlacement, WhatAJobWaitsForIsSaidGpuByGpu) {
  std::vector<GpuSlot> slots = FourH200s();
  slots[0].held_by = "x";
  slots[3].foreign = {{1234, 40 * kGiB}};
  slots[2].held_by = "y";
  GpuPlacement p = PlaceJob({2, {}, std::nullopt}, slots, kGiB);
  EXPECT_TRUE(p.gpus.empty());
  EXPECT_EQ(p.waiting_for, "2 GPUs: GPU 0 held by job x, GPU 2 held by job y, GPU 3 has 40.0 GiB used by pid 1234");
}

TEST(GpuPlacement, SmallOutsideProcessesDoNotMakeAGpuBusy) {
  std::vector<GpuSlot> slots = FourH200s();
  slots[0].foreign = {{77, 500ull << 20}};  // a 500 MiB display or monitoring process
  EXPECT_THAT(PlaceJob({1, {}, std::nullopt}, slots, kGiB).gpus, ElementsAre(0));
  slots[0].foreign.push_back({78, 600ull << 20});  // together past 1 GiB
  EXPECT_THAT(PlaceJob({1, {}, std::nullopt}, slots, kGiB).gpus, ElementsAre(1));
}

TEST(GpuPlacement, AListWaitsForAllOfItsGpus) {
  std::vector<GpuSlot> slots = FourH200s();
  slots[3].held_by = "x";
  GpuPlacement p = PlaceJob({0, {"1", "GPU-3"}, std::nullopt}, slots, kGiB);
  EXPECT_TRUE(p.gpus.empty());
  EXPECT_EQ(p.waiting_for, "2 GPUs: GPU 3 held by job x");
  slots[3].held_by.clear();
  EXPECT_THAT(PlaceJob({0, {"1", "GPU-3"}, std::nullopt}, slots, kGiB).gpus, ElementsAre(1, 3));
}

TEST(GpuPlacement, MemoryAskedForIsFreeMemory) {
  std::vector<GpuSlot> slots = FourH200s();
  for (GpuSlot& s : slots) s.free_bytes = 30 * kGiB;
  slots[2].free_bytes = 100 * kGiB;
  EXPECT_THAT(PlaceJob({1, {}, 80 * kGiB}, slots, kGiB).gpus, ElementsAre(2));
  GpuPlacement none = PlaceJob({2, {}, 80 * kGiB}, slots, kGiB);
  EXPECT_TRUE(none.gpus.empty());
  EXPECT_THAT(none.waiting_for, ::testing::HasSubstr("GPU 0 has 30.0 GiB free, 80.0 GiB asked"));
}

TEST(GpuPlacement, ImpossibleRequestsAreRefusedAtOnce) {
  std::vector<GpuSlot> slots = FourH200s();
  EXPECT_TRUE(CheckGpuRequest({4, {}, std::nullopt}, slots).ok());
  Status more = CheckGpuRequest({5, {}, std::nullopt}, slots);
  EXPECT_EQ(more.code(), ErrorCode::kInvalidArgument);
  EXPECT_THAT(more.message(), ::testing::HasSubstr("more GPUs than this host has (4)"));
  EXPECT_THAT(CheckGpuRequest({1, {}, 200 * kGiB}, slots).message(),
              ::testing::HasSubstr("more than a GPU here has (140.0 GiB)"));
  EXPECT_THAT(CheckGpuRequest({0, {"7"}, std::nullopt}, slots).message(),
              ::testing::HasSubstr("--gpus names GPU 7, and this host has 4 GPUs (0 to 3)"));
}

TEST(GpuPlacement, MigInstancesAndUuidPrefixesAreCudasToResolve) {
  std::vector<GpuSlot> slots = FourH200s();
  EXPECT_TRUE(Placeable({"0", "GPU-3"}, slots));
  EXPECT_TRUE(Placeable({"9"}, slots));  // placeable, and refused: the host has no GPU 9
  EXPECT_FALSE(Placeable({"MIG-5c0b4a3e-aaaa-bbbb-cccc-0123456789ab"}, slots));
  EXPECT_FALSE(Placeable({"GPU-3a"}, slots));
}

TEST(GpuPlacement, TheQueueIsPriorityThenFirstCome) {
  EXPECT_THAT(QueueOrder({{"c", 0, 300}, {"a", 0, 100}, {"urgent", 5, 400}, {"b", 0, 200}, {"low", -1, 50}}),
              ElementsAre("urgent", "a", "b", "c", "low"));
  EXPECT_THAT(SplitGpuList("0,GPU-a,,3"), ElementsAre("0", "GPU-a", "3"));
}

}  // namespace
}  // namespace gpuctl::train

namespace gpuctl::train {
namespace {

// An 8-GPU host as an agent in an LXC guest sees it: five GPUs 45-97 GB full
// of processes in other pid namespaces (their pids are not alive here).
sys::GpuReport EightGpusFiveFullOfOthers() {
  sys::GpuReport report;
  for (uint32_t i = 0; i < 8; ++i) {
    sys::GpuDevice gpu;
    gpu.index = i;
    gpu.uuid = "GPU-" + std::to_string(i);
    gpu.memory_total_bytes = 140 * kGiB;
    uint64_t used = 0;
    if (i == 0 || i == 2 || i == 4 || i == 5 || i == 7) {
      used = (45 + 13 * i) * kGiB;
      gpu.processes.push_back({4000000 + i, "python", used});
    }
    gpu.memory_used_bytes = used;
    gpu.memory_free_bytes = 140 * kGiB - used;
    report.devices.push_back(gpu);
  }
  return report;
}

auto NoOwner() {
  return [](uint32_t) { return std::optional<GpuProcessOwner>(); };
}
auto NothingVisible() {
  return [](uint32_t) { return false; };
}

TEST(GpuSlotsFromReport, ProcessesThisAgentCannotSeeStillFillTheirGpus) {
  std::vector<GpuSlot> slots = GpuSlotsFromReport(EightGpusFiveFullOfOthers(), {}, NoOwner(), NothingVisible(), {});
  GpuPlacement first = PlaceJob({2, {}, std::nullopt}, slots, kGiB);
  EXPECT_THAT(first.gpus, ElementsAre(1, 3));
  for (uint32_t g : first.gpus) slots[g].held_by = "first";
  GpuPlacement second = PlaceJob({2, {}, std::nullopt}, slots, kGiB);
  EXPECT_TRUE(second.gpus.empty()) << "one free GPU left (6): wait";
  EXPECT_TRUE(PlaceJob({3, {}, std::nullopt}, slots, kGiB).gpus.empty());
  GpuPlacement waits = PlaceJob({1, {"0"}, std::nullopt}, slots, kGiB);
  EXPECT_EQ(waits.waiting_for, "1 GPU: GPU 0 has 45.0 GiB used by processes this agent cannot see");
}

TEST(GpuSlotsFromReport, AProcessOfAJobHoldsItsGpuAndAJustEndedRunsAreNotForeign) {
  sys::GpuReport report = EightGpusFiveFullOfOthers();
  auto owner = [](uint32_t pid) -> std::optional<GpuProcessOwner> {
    if (pid == 4000000) return GpuProcessOwner{"mine", true};   // a setsid'd worker, by its cgroup
    if (pid == 4000002) return GpuProcessOwner{"ended", false};  // the run just ended
    return std::nullopt;
  };
  std::vector<GpuSlot> slots = GpuSlotsFromReport(report, {}, owner, NothingVisible(), {});
  EXPECT_EQ(slots[0].held_by, "mine");
  EXPECT_TRUE(slots[0].foreign.empty());
  EXPECT_EQ(slots[2].held_by, "") << "an ended run holds nothing";
  EXPECT_TRUE(slots[2].foreign.empty()) << "and its memory is nobody else's";
  ASSERT_EQ(slots[4].foreign.size(), 1u);
  EXPECT_FALSE(slots[4].foreign[0].visible);
}

// vGPU and some MIG setups list no processes: the device's used memory, less
// what this agent's jobs hold there, is someone else's.
TEST(GpuSlotsFromReport, WithoutAProcessListUsedMemoryLessOursIsForeign) {
  sys::GpuReport report = EightGpusFiveFullOfOthers();
  for (sys::GpuDevice& gpu : report.devices) gpu.processes.clear();
  report.devices[1].memory_used_bytes = 512ull << 20;  // the driver's own: under the busy line
  // GPU 4 runs a job started without --gpus, last seen holding 20 GiB there.
  std::map<uint32_t, uint64_t> ours = {{4, 20 * kGiB}};
  std::vector<GpuSlot> slots = GpuSlotsFromReport(report, {{2, "mine"}}, NoOwner(), NothingVisible(), ours);
  ASSERT_EQ(slots[0].foreign.size(), 1u);
  EXPECT_EQ(slots[0].foreign[0].bytes, 45 * kGiB);
  EXPECT_EQ(slots[0].foreign[0].pid, 0u);
  ASSERT_EQ(slots[4].foreign.size(), 1u);
  EXPECT_EQ(slots[4].foreign[0].bytes, (45 + 52 - 20) * kGiB) << "ours subtracted";
  EXPECT_TRUE(slots[2].foreign.empty()) << "a GPU given to a job holds that job's memory";
  EXPECT_EQ(slots[2].held_by, "mine");
  GpuPlacement p = PlaceJob({3, {}, std::nullopt}, slots, kGiB);
  EXPECT_THAT(p.gpus, ElementsAre(1, 3, 6));
}

TEST(GpuSlotsFromReport, VisibleProcessesAreNamedBesideTheUnseen) {
  sys::GpuReport report = EightGpusFiveFullOfOthers();
  report.devices[0].processes.push_back({77, "python", 10 * kGiB});
  auto visible = [](uint32_t pid) { return pid == 77; };
  std::vector<GpuSlot> slots = GpuSlotsFromReport(report, {}, NoOwner(), visible, {});
  GpuPlacement p = PlaceJob({1, {"0"}, std::nullopt}, slots, kGiB);
  EXPECT_EQ(p.waiting_for, "1 GPU: GPU 0 has 55.0 GiB used by pid 77 and processes this agent cannot see");
}

}  // namespace
}  // namespace gpuctl::train

namespace gpuctl::train {
namespace {

TEST(GpuPlacementDrained, ADrainedGpuIsNeverPlacedAndTheWaitNamesTheDrain) {
  std::vector<GpuSlot> slots;
  for (uint32_t i = 0; i < 2; ++i) slots.push_back({i, "GPU-" + std::to_string(i), 80ull << 30, 80ull << 30, {}, {}, {}});
  slots[0].drained = "Xid 79: GPU has fallen off the bus";
  GpuPlacement any = PlaceJob({.num_gpus = 1, .gpus = {}, .gpu_mem_bytes = std::nullopt}, slots, 1ull << 30);
  EXPECT_EQ(any.gpus, std::vector<uint32_t>{1});
  GpuPlacement pinned = PlaceJob({.num_gpus = 0, .gpus = {"0"}, .gpu_mem_bytes = std::nullopt}, slots, 1ull << 30);
  EXPECT_TRUE(pinned.gpus.empty());
  EXPECT_NE(pinned.waiting_for.find("GPU 0 drained (Xid 79: GPU has fallen off the bus)"), std::string::npos)
      << pinned.waiting_for;
  sys::GpuReport report;
  sys::GpuDevice gpu;
  gpu.index = 0;
  gpu.drain = sys::GpuDrainInfo{"by hand", std::nullopt, "maintenance", 1, true};
  report.devices.push_back(gpu);
  std::vector<GpuSlot> from = GpuSlotsFromReport(
      report, {}, [](uint32_t) { return std::nullopt; }, [](uint32_t) { return true; }, {});
  ASSERT_EQ(from.size(), 1u);
  EXPECT_EQ(from[0].drained, "by hand");
}

}  // namespace
}  // namespace gpuctl::train
