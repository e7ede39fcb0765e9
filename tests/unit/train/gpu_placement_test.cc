// The GPU queue's placement and order as pure functions: counts and lists,
// jobs and outside processes holding GPUs, memory asked for, and refusals.
#include "agents/train/gpu_placement.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

namespace gpuctl::train {
namespace {

using ::testing::ElementsAre;

constexpr uint64_t kGiB = uint64_t{1} << 30;

std::vector<GpuSlot> FourH200s() {
  std::vector<GpuSlot> slots;
  for (uint32_t i = 0; i < 4; ++i) {
    slots.push_back({i, "GPU-" + std::to_string(i), 140 * kGiB, 140 * kGiB, {}, {}});
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
