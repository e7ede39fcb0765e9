// The GPU queue's two decisions as tables: where a new job goes at its
// start (started, queued or refused), and what an admission pass does with
// the queued jobs in order.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "agents/train/gpu_placement.h"
#include "common/units.h"

namespace gpuctl::train {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;
using Kind = StartPlacement::Kind;


std::vector<GpuSlot> Gpus(uint32_t n) {
  std::vector<GpuSlot> slots;
  for (uint32_t i = 0; i < n; ++i) slots.push_back({i, "GPU-" + std::to_string(i), 80 * kGiB, 80 * kGiB, {}, {}, {}});
  return slots;
}

struct StartRow {
  const char* what;
  GpuRequest request;
  std::vector<GpuSlot> slots;
  uint32_t ahead;
  Kind kind;
  std::vector<uint32_t> gpus;
  std::string said;  // waiting_for or the refusal, as a substring
};

TEST(DecideStartPlacement, EachCaseAsATable) {
  std::vector<GpuSlot> first_held = Gpus(2);
  first_held[0].held_by = "a";
  std::vector<GpuSlot> all_held = Gpus(2);
  all_held[0].held_by = all_held[1].held_by = "a";
  const std::vector<StartRow> rows = {
      {"a free GPU", {1, {}, std::nullopt}, Gpus(2), 0, Kind::kStart, {0}, ""},
      {"the next free one", {1, {}, std::nullopt}, first_held, 0, Kind::kStart, {1}, ""},
      {"a list, free", {0, {"1"}, std::nullopt}, Gpus(2), 0, Kind::kStart, {1}, ""},
      {"all held", {1, {}, std::nullopt}, all_held, 0, Kind::kQueue, {}, "1 GPU: GPU 0 held by job a"},
      {"free, but others queued ahead", {1, {}, std::nullopt}, Gpus(2), 2, Kind::kQueue, {},
       "its turn: 2 queued ahead of it"},
      {"more than the host has", {3, {}, std::nullopt}, Gpus(2), 0, Kind::kRefuse, {},
       "more GPUs than this host has (2)"},
      {"a GPU the host lacks", {0, {"7"}, std::nullopt}, Gpus(2), 0, Kind::kRefuse, {}, "--gpus names GPU 7"},
      {"a count with no GPU seen", {1, {}, std::nullopt}, {}, 0, Kind::kRefuse, {},
       "need the agent to see the GPUs, and it sees none (nvml: no driver)"},
      {"memory with no GPU seen", {0, {}, 10 * kGiB}, {}, 0, Kind::kRefuse, {}, "it sees none"},
      {"a list with no GPU seen starts as asked", {0, {"0"}, std::nullopt}, {}, 0, Kind::kStart, {}, ""},
      {"a MIG instance starts as asked", {0, {"MIG-5c0b4a3e"}, std::nullopt}, all_held, 3, Kind::kStart, {}, ""},
  };
  for (const StartRow& row : rows) {
    SCOPED_TRACE(row.what);
    StartPlacement d = DecideStartPlacement(row.request, row.slots, "nvml: no driver", row.ahead, kGiB);
    EXPECT_EQ(d.kind, row.kind);
    EXPECT_EQ(d.gpus, row.gpus);
    if (row.kind == Kind::kQueue) {
      EXPECT_THAT(d.waiting_for, HasSubstr(row.said));
    }
    if (row.kind == Kind::kRefuse) {
      EXPECT_EQ(d.refusal.code(), ErrorCode::kInvalidArgument);
      EXPECT_THAT(d.refusal.message(), HasSubstr(row.said));
    }
  }
}

TEST(PlanAdmissions, TheFirstFitGoAndNobodyPassesTheHead) {
  std::vector<GpuSlot> slots = Gpus(3);
  slots[2].held_by = "running";
  std::vector<QueuedRequest> queue = {{"one", {1, {}, std::nullopt}},
                                      {"two", {1, {}, std::nullopt}},
                                      {"big", {2, {}, std::nullopt}},
                                      {"small", {1, {}, std::nullopt}},
                                      {"later", {0, {"2"}, std::nullopt}}};
  std::vector<Admission> plan = PlanAdmissions(queue, slots, "", kGiB);
  ASSERT_EQ(plan.size(), 5u);
  EXPECT_THAT(plan[0].gpus, ElementsAre(0));
  EXPECT_THAT(plan[1].gpus, ElementsAre(1));  // GPU 0 went to 'one' in this pass
  EXPECT_TRUE(plan[2].gpus.empty());
  EXPECT_EQ(plan[2].position, 1u);
  EXPECT_EQ(plan[2].waiting_for,
            "2 GPUs: GPU 0 held by job one, GPU 1 held by job two, GPU 2 held by job running");
  EXPECT_EQ(plan[3].position, 2u);  // would not fit either, and waits for its GPUs
  EXPECT_THAT(plan[3].waiting_for, HasSubstr("1 GPU: "));
  EXPECT_EQ(plan[4].position, 3u);
  EXPECT_THAT(plan[4].waiting_for, HasSubstr("GPU 2 held by job running"));
}

TEST(PlanAdmissions, AJobThatWouldFitBehindTheHeadWaitsItsTurn) {
  std::vector<GpuSlot> slots = Gpus(2);
  slots[0].held_by = "running";
  std::vector<QueuedRequest> queue = {{"head", {2, {}, std::nullopt}}, {"small", {1, {}, std::nullopt}}};
  std::vector<Admission> plan = PlanAdmissions(queue, slots, "", kGiB);
  ASSERT_EQ(plan.size(), 2u);
  EXPECT_TRUE(plan[1].gpus.empty());
  EXPECT_EQ(plan[1].position, 2u);
  EXPECT_EQ(plan[1].waiting_for, "its turn, behind job head");
}

TEST(PlanAdmissions, NoGpuSeenSaysWhy) {
  std::vector<Admission> plan = PlanAdmissions({{"a", {1, {}, std::nullopt}}}, {}, "nvidia-smi failed", kGiB);
  ASSERT_EQ(plan.size(), 1u);
  EXPECT_EQ(plan[0].waiting_for, "the GPUs (none seen: nvidia-smi failed)");
  EXPECT_EQ(plan[0].position, 1u);
}

}  // namespace
}  // namespace gpuctl::train
