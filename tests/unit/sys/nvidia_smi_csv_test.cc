#include "agents/sys/nvidia_smi_csv.h"

#include "agents/sys/nvidia_smi_refusal.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "tests/fakes/temp_dir.h"
#include "common/units.h"

namespace gpuctl::sys {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;

constexpr const char* kH200Uuid = "GPU-c6489789-7836-64bc-561f-33b9f6b86ea3";

// The fields of the captured query: gpuctl's list as a driver before 535
// is asked it, without retired_pages.pending (not asked then), plus pstate.
std::vector<std::string> CapturedFields() {
  auto fields = GpuQueryFields(ClockReasonsField::kThrottle);
  std::erase(fields, "retired_pages.pending");
  fields.push_back("pstate");
  return fields;
}

void ExpectCapturedH200(const GpuDevice& d) {
  EXPECT_EQ(d.index, 0u);
  EXPECT_EQ(d.uuid, kH200Uuid);
  EXPECT_EQ(d.name, "NVIDIA H200");
  EXPECT_EQ(d.pci_bus_id, "00000000:00:06.0");
  EXPECT_EQ(d.compute_capability, "9.0");
  EXPECT_EQ(d.driver_version, "580.159.04");
  EXPECT_EQ(d.memory_total_bytes, 143771 * kMiB);
  EXPECT_EQ(d.memory_used_bytes, 0u);
  EXPECT_EQ(d.memory_free_bytes, 143156 * kMiB);
  EXPECT_EQ(d.utilization_gpu_pct, 0u);
  EXPECT_EQ(d.utilization_memory_pct, 0u);
  EXPECT_EQ(d.temperature_c, 41u);
  ASSERT_TRUE(d.power_draw_w.has_value());
  EXPECT_DOUBLE_EQ(*d.power_draw_w, 81.94);
  ASSERT_TRUE(d.power_limit_w.has_value());
  EXPECT_DOUBLE_EQ(*d.power_limit_w, 700.0);
  EXPECT_THAT(d.clock_event_reasons, ElementsAre("gpu_idle"));
  EXPECT_EQ(d.ecc_uncorrected, 0u);
}

TEST(NvidiaSmiCsvTest, ParsesTheRealNoUnitsCapture) {
  auto devices = ParseGpuQueryCsv(testing::ReadFixture("query-gpu-nounits.csv"), CapturedFields());
  ASSERT_TRUE(devices.ok()) << devices.status().ToString();
  ASSERT_EQ(devices->size(), 1u);
  ExpectCapturedH200((*devices)[0]);
}

// The with-units form carries a header, which decides the columns; its
// clocks column comes back as clocks_event_reasons.active although the query
// asked for clocks_throttle_reasons.active.
TEST(NvidiaSmiCsvTest, ParsesTheRealCaptureWithHeaderAndUnits) {
  std::string text = testing::ReadFixture("query-gpu.csv");
  ASSERT_THAT(text, HasSubstr("clocks_event_reasons.active"));
  auto devices = ParseGpuQueryCsv(text, {"these", "are", "ignored"});
  ASSERT_TRUE(devices.ok()) << devices.status().ToString();
  ASSERT_EQ(devices->size(), 1u);
  ExpectCapturedH200((*devices)[0]);
}

TEST(NvidiaSmiCsvTest, OldThrottleHeaderNameIsTheSameColumn) {
  auto devices = ParseGpuQueryCsv(
      "index, clocks_throttle_reasons.active, power.draw [W]\n"
      "3, 0x0000000000000044, 250.50 W\n",
      {});
  ASSERT_TRUE(devices.ok()) << devices.status().ToString();
  ASSERT_EQ(devices->size(), 1u);
  EXPECT_EQ((*devices)[0].index, 3u);
  EXPECT_THAT((*devices)[0].clock_event_reasons, ElementsAre("sw_power_cap", "hw_thermal_slowdown"));
  EXPECT_DOUBLE_EQ((*devices)[0].power_draw_w.value_or(0), 250.5);
}

TEST(NvidiaSmiCsvTest, UnavailableValuesLeaveFieldsEmpty) {
  auto devices = ParseGpuQueryCsv(
      "1, GPU-aaaa, NVIDIA GeForce RTX 4090, 00000000:41:00.0, [N/A], 580.159.04, 24564, 1200, "
      "23364, [N/A], [Not Supported], N/A, [Unknown Error], [Not Supported], [N/A], "
      "[Not Supported], [N/A]\n");
  ASSERT_TRUE(devices.ok()) << devices.status().ToString();
  ASSERT_EQ(devices->size(), 1u);
  const GpuDevice& d = (*devices)[0];
  EXPECT_EQ(d.index, 1u);
  EXPECT_EQ(d.name, "NVIDIA GeForce RTX 4090");
  EXPECT_EQ(d.compute_capability, "");
  EXPECT_EQ(d.memory_total_bytes, 24564 * kMiB);
  EXPECT_EQ(d.memory_used_bytes, 1200 * kMiB);
  EXPECT_FALSE(d.utilization_gpu_pct.has_value());
  EXPECT_FALSE(d.utilization_memory_pct.has_value());
  EXPECT_FALSE(d.temperature_c.has_value());
  EXPECT_FALSE(d.power_draw_w.has_value());
  EXPECT_FALSE(d.power_limit_w.has_value());
  EXPECT_TRUE(d.clock_event_reasons.empty());
  EXPECT_FALSE(d.ecc_uncorrected.has_value());
  EXPECT_FALSE(d.retired_pages_pending.has_value());
}

// nvidia-smi does not quote: a name with ", " spills into the next cells.
TEST(NvidiaSmiCsvTest, NameContainingCommaIsGluedBack) {
  auto devices = ParseGpuQueryCsv(
      "0, GPU-1, Tesla T4, rev A, early, 00000000:3B:00.0, 7.5, 535.54.03, 15360, 0, 14930, 0, 0, "
      "37, 9.53, 70.00, 0x0000000000000001, 0, No\n");
  ASSERT_TRUE(devices.ok()) << devices.status().ToString();
  ASSERT_EQ(devices->size(), 1u);
  EXPECT_EQ((*devices)[0].name, "Tesla T4, rev A, early");
  EXPECT_EQ((*devices)[0].pci_bus_id, "00000000:3B:00.0");
  EXPECT_EQ((*devices)[0].temperature_c, 37u);
  EXPECT_EQ((*devices)[0].retired_pages_pending, false);
}

TEST(NvidiaSmiCsvTest, SkipsBlankLinesAndCarriageReturnsAndReadsEveryGpu) {
  auto devices = ParseGpuQueryCsv(
      "\n0, GPU-a, A, 00000000:01:00.0, 9.0, 580.1, 100, 10, 90, 5, 6, 30, 50.5, 300.00, 0x0, 0, No\r\n"
      "\n"
      "1, GPU-b, B, 00000000:02:00.0, 9.0, 580.1, 200, 20, 180, 7, 8, 31, 60.25, 300.00, 0x1, 2, Yes\n\n");
  ASSERT_TRUE(devices.ok()) << devices.status().ToString();
  ASSERT_EQ(devices->size(), 2u);
  EXPECT_EQ((*devices)[0].uuid, "GPU-a");
  EXPECT_TRUE((*devices)[0].clock_event_reasons.empty());
  EXPECT_EQ((*devices)[0].ecc_uncorrected, 0u);
  EXPECT_EQ((*devices)[1].index, 1u);
  EXPECT_EQ((*devices)[1].memory_total_bytes, 200 * kMiB);
  EXPECT_EQ((*devices)[1].ecc_uncorrected, 2u);
  EXPECT_DOUBLE_EQ((*devices)[1].power_draw_w.value_or(0), 60.25);
  EXPECT_EQ((*devices)[0].retired_pages_pending, false);
  EXPECT_EQ((*devices)[1].retired_pages_pending, true);
}

TEST(NvidiaSmiCsvTest, EmptyOutputIsNoGpus) {
  auto devices = ParseGpuQueryCsv("\n\n");
  ASSERT_TRUE(devices.ok());
  EXPECT_TRUE(devices->empty());
}

TEST(NvidiaSmiCsvTest, MalformedValueNamesLineAndField) {
  auto bad_number = ParseGpuQueryCsv(
      "0, GPU-a, A, 00000000:01:00.0, 9.0, 580.1, lots, 10, 90, 5, 6, 30, 50.5, 300.00, 0x0, 0, No\n");
  ASSERT_FALSE(bad_number.ok());
  EXPECT_EQ(bad_number.status().code(), ErrorCode::kInvalidArgument);
  EXPECT_THAT(bad_number.status().message(), HasSubstr("line 1, memory.total: cannot parse 'lots'"));

  auto wrong_unit = ParseGpuQueryCsv("index, memory.total [MiB]\n0, 12 GiB\n", {});
  ASSERT_FALSE(wrong_unit.ok());
  EXPECT_THAT(wrong_unit.status().message(), HasSubstr("line 2, memory.total: cannot parse '12 GiB'"));

  auto short_line = ParseGpuQueryCsv("0, GPU-a, A\n");
  ASSERT_FALSE(short_line.ok());
  EXPECT_THAT(short_line.status().message(), HasSubstr("3 columns, expected 17"));

  // A flag is "Yes" or "No" (or unavailable), nothing else.
  auto bad_flag = ParseGpuQueryCsv("index, retired_pages.pending\n0, yes\n", {});
  ASSERT_FALSE(bad_flag.ok());
  EXPECT_THAT(bad_flag.status().message(), HasSubstr("line 2, retired_pages.pending: cannot parse 'yes'"));
}

// What an nvidia-smi that refused retired_pages.pending answers to the
// list without it: 16 columns, read as such, the flag unknown.
TEST(NvidiaSmiCsvTest, ParsesTheAnswerOfAnOldNvidiaSmiThatRefusedTheNewField) {
  std::vector<std::string> fields = GpuQueryFields();
  ASSERT_TRUE(DropRefusedField(fields, "retired_pages.pending"));
  auto devices = ParseGpuQueryCsv(
      "0, GPU-a, A, 00000000:01:00.0, 7.0, 470.1, 100, 10, 90, 5, 6, 30, 50.5, 300.00, 0x0, 0\n", fields);
  ASSERT_TRUE(devices.ok()) << devices.status().ToString();
  ASSERT_EQ(devices->size(), 1u);
  EXPECT_EQ((*devices)[0].ecc_uncorrected, 0u);
  EXPECT_FALSE((*devices)[0].retired_pages_pending.has_value());

  // Asked with the full list, the same answer is one column short.
  auto full = ParseGpuQueryCsv(
      "0, GPU-a, A, 00000000:01:00.0, 7.0, 470.1, 100, 10, 90, 5, 6, 30, 50.5, 300.00, 0x0, 0\n");
  EXPECT_FALSE(full.ok());
}

// --query-remapped-rows, as nvidia-smi prints it with and without a header.
TEST(NvidiaSmiCsvTest, ParsesRemappedRows) {
  auto with_header = ParseRemappedRowsCsv(
      "gpu_uuid, remapped_rows.pending, remapped_rows.failure\n"
      "GPU-a, No, No\n"
      "GPU-b, Yes, No\n"
      "GPU-c, No, Yes\n"
      "GPU-d, [N/A], [N/A]\n",
      {"ignored"});
  ASSERT_TRUE(with_header.ok()) << with_header.status().ToString();
  ASSERT_EQ(with_header->size(), 4u);
  EXPECT_EQ((*with_header)[0].gpu_uuid, "GPU-a");
  EXPECT_EQ((*with_header)[0].pending, false);
  EXPECT_EQ((*with_header)[0].failure, false);
  EXPECT_EQ((*with_header)[1].pending, true);
  EXPECT_EQ((*with_header)[1].failure, false);
  EXPECT_EQ((*with_header)[2].pending, false);
  EXPECT_EQ((*with_header)[2].failure, true);
  EXPECT_FALSE((*with_header)[3].pending.has_value());
  EXPECT_FALSE((*with_header)[3].failure.has_value());

  auto no_header = ParseRemappedRowsCsv("GPU-b, Yes, No\n");
  ASSERT_TRUE(no_header.ok()) << no_header.status().ToString();
  ASSERT_EQ(no_header->size(), 1u);
  EXPECT_EQ((*no_header)[0].gpu_uuid, "GPU-b");
  EXPECT_EQ((*no_header)[0].pending, true);

  auto bad = ParseRemappedRowsCsv("GPU-b, 1, No\n");
  ASSERT_FALSE(bad.ok());
  EXPECT_THAT(bad.status().message(),
              HasSubstr("--query-remapped-rows line 1, remapped_rows.pending: cannot parse '1'"));
}

TEST(NvidiaSmiCsvTest, AttachesRemappedRowsToTheGpuWithTheirUuid) {
  std::vector<GpuDevice> devices(2);
  devices[0].uuid = "GPU-a";
  devices[1].uuid = "GPU-b";
  AttachRemappedRows(devices, {{"GPU-b", true, false}, {"GPU-gone", true, true}});
  EXPECT_FALSE(devices[0].row_remap_pending.has_value());
  EXPECT_FALSE(devices[0].row_remap_failure.has_value());
  EXPECT_EQ(devices[1].row_remap_pending, true);
  EXPECT_EQ(devices[1].row_remap_failure, false);
}

TEST(NvidiaSmiCsvTest, QueryFieldsMatchWhatNvidiaSmiIsAskedFor) {
  EXPECT_EQ(JoinQueryFields(GpuQueryFields()),
            "index,uuid,name,pci.bus_id,compute_cap,driver_version,memory.total,memory.used,"
            "memory.free,utilization.gpu,utilization.memory,temperature.gpu,power.draw,power.limit,"
            "clocks_event_reasons.active,ecc.errors.uncorrected.volatile.total,retired_pages.pending");
  EXPECT_THAT(JoinQueryFields(GpuQueryFields(ClockReasonsField::kThrottle)),
              HasSubstr(",clocks_throttle_reasons.active,"));
  EXPECT_EQ(JoinQueryFields(ComputeAppsQueryFields()), "pid,process_name,used_memory,gpu_uuid");
  EXPECT_EQ(JoinQueryFields(RemappedRowsQueryFields()), "gpu_uuid,remapped_rows.pending,remapped_rows.failure");
}

TEST(NvidiaSmiCsvTest, ParsesTheRealComputeAppsCapture) {
  auto apps = ParseComputeAppsCsv(testing::ReadFixture("query-apps.csv"));
  ASSERT_TRUE(apps.ok()) << apps.status().ToString();
  ASSERT_EQ(apps->size(), 1u);
  EXPECT_EQ((*apps)[0].gpu_uuid, kH200Uuid);
  EXPECT_EQ((*apps)[0].process.pid, 479u);
  EXPECT_EQ((*apps)[0].process.name, "python3");
  EXPECT_EQ((*apps)[0].process.used_memory_bytes, 20998 * kMiB);
}

TEST(NvidiaSmiCsvTest, ParsesComputeAppsWithoutUnitsAndOddNames) {
  auto apps = ParseComputeAppsCsv(
      "479, python3, 20998, GPU-a\n"
      "812, /opt/my app, v2/bin/train, [N/A], GPU-b\n"
      "900, [Not Found], 512, GPU-a\n");
  ASSERT_TRUE(apps.ok()) << apps.status().ToString();
  ASSERT_EQ(apps->size(), 3u);
  EXPECT_EQ((*apps)[0].process.used_memory_bytes, 20998 * kMiB);
  EXPECT_EQ((*apps)[1].process.name, "/opt/my app, v2/bin/train");
  EXPECT_EQ((*apps)[1].process.used_memory_bytes, 0u);
  EXPECT_EQ((*apps)[1].gpu_uuid, "GPU-b");
  EXPECT_EQ((*apps)[2].process.name, "");
}

TEST(NvidiaSmiCsvTest, AttachesAppsToTheGpuWithTheirUuid) {
  std::vector<GpuDevice> devices(2);
  devices[0].uuid = "GPU-a";
  devices[1].uuid = "GPU-b";
  std::vector<ComputeApp> apps = {{"GPU-b", {10, "x", 1}}, {"GPU-a", {11, "y", 2}},
                                  {"GPU-gone", {12, "z", 3}}, {"GPU-b", {13, "w", 4}}};
  AttachComputeApps(devices, apps);
  ASSERT_EQ(devices[0].processes.size(), 1u);
  EXPECT_EQ(devices[0].processes[0].pid, 11u);
  ASSERT_EQ(devices[1].processes.size(), 2u);
  EXPECT_EQ(devices[1].processes[0].pid, 10u);
  EXPECT_EQ(devices[1].processes[1].pid, 13u);
}

}  // namespace
}  // namespace gpuctl::sys
