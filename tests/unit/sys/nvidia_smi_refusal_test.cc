// How an older nvidia-smi refuses a field or a switch, in its own words.
#include "agents/sys/nvidia_smi_refusal.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "agents/sys/nvidia_smi_csv.h"

namespace gpuctl::sys {
namespace {

using ::testing::ElementsAre;

TEST(NvidiaSmiRefusalTest, NamesTheRefusedField) {
  // As nvidia-smi prints it: the line, then a blank line.
  EXPECT_EQ(RefusedQueryField("Field \"retired_pages.pending\" is not a valid field to query.\n\n"),
            "retired_pages.pending");
  // Among other lines, on either stream (the reader joins them).
  EXPECT_EQ(RefusedQueryField("\nsomething\n  Field \"clocks_event_reasons.active\" is not a valid field "
                              "to query.\r\n"),
            "clocks_event_reasons.active");
}

TEST(NvidiaSmiRefusalTest, OtherFailuresNameNoField) {
  EXPECT_EQ(RefusedQueryField(""), std::nullopt);
  EXPECT_EQ(RefusedQueryField("Failed to initialize NVML: Driver/library version mismatch\n"), std::nullopt);
  EXPECT_EQ(RefusedQueryField("Field \"\" is not a valid field to query.\n"), std::nullopt);
  EXPECT_EQ(RefusedQueryField("Field \"x\" is fine\n"), std::nullopt);
  EXPECT_EQ(RefusedQueryField("Field \"unterminated is not a valid field to query.\n"), std::nullopt);
}

TEST(NvidiaSmiRefusalTest, RecognisesARefusedSwitch) {
  const char* refused =
      "ERROR: Option --query-remapped-rows=gpu_uuid,remapped_rows.pending is not recognized. Please run "
      "'nvidia-smi -h' for help.\n\n";
  EXPECT_TRUE(RefusesOption(refused, "--query-remapped-rows"));
  EXPECT_FALSE(RefusesOption(refused, "--query-gpu"));
  EXPECT_TRUE(RefusesOption("ERROR: Option -lms100 is not recognized. Please run 'nvidia-smi -h' for help.",
                            "-lms100"));
  EXPECT_FALSE(RefusesOption("Invalid combination of input arguments. Please run 'nvidia-smi -h' for help.",
                             "--query-remapped-rows"));
  EXPECT_FALSE(RefusesOption("", "--query-remapped-rows"));
}

TEST(NvidiaSmiRefusalTest, DropsOrRenamesOnlyWhatGpuctlCanDoWithout) {
  std::vector<std::string> fields = GpuQueryFields();
  ASSERT_EQ(fields.back(), "retired_pages.pending");

  ASSERT_TRUE(DropRefusedField(fields, "clocks_event_reasons.active"));
  EXPECT_EQ(fields, GpuQueryFields(ClockReasonsField::kThrottle));

  ASSERT_TRUE(DropRefusedField(fields, "retired_pages.pending"));
  EXPECT_EQ(fields.size(), GpuQueryFields().size() - 1);
  EXPECT_EQ(fields.back(), "ecc.errors.uncorrected.volatile.total");

  // Refused again, or a field gpuctl needs: nothing to retry.
  std::vector<std::string> before = fields;
  EXPECT_FALSE(DropRefusedField(fields, "retired_pages.pending"));
  EXPECT_FALSE(DropRefusedField(fields, "clocks_event_reasons.active"));
  EXPECT_FALSE(DropRefusedField(fields, "clocks_throttle_reasons.active"));
  EXPECT_FALSE(DropRefusedField(fields, "memory.total"));
  EXPECT_FALSE(DropRefusedField(fields, "index"));
  EXPECT_EQ(fields, before);
}

TEST(NvidiaSmiRefusalTest, ShortListsStayInOrder) {
  std::vector<std::string> fields = {"index", "retired_pages.pending", "uuid"};
  ASSERT_TRUE(DropRefusedField(fields, "retired_pages.pending"));
  EXPECT_THAT(fields, ElementsAre("index", "uuid"));
}

}  // namespace
}  // namespace gpuctl::sys
