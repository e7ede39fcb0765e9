// NvidiaSmiGpuReader against the stand-in tests/fakes/bin/nvidia-smi, run by
// the real subprocess runner; the stand-in prints the real H200 captures.
#include "agents/sys/nvidia_smi_gpu_reader.h"

#include <fstream>
#include <sstream>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "agents/sys/command_runner.h"
#include "tests/fakes/scoped_env.h"
#include "tests/fakes/temp_dir.h"
#include "common/units.h"

namespace gpuctl::sys {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::StartsWith;
using namespace std::chrono_literals;

constexpr const char* kStandIn = GPUCTL_SOURCE_DIR "/tests/fakes/bin/nvidia-smi";
#define GPU_FIELDS_BEFORE_CLOCKS                                                                \
  "--query-gpu=index,uuid,name,pci.bus_id,compute_cap,driver_version,memory.total,memory.used," \
  "memory.free,utilization.gpu,utilization.memory,temperature.gpu,power.draw,power.limit,"
constexpr const char* kGpuQuery = GPU_FIELDS_BEFORE_CLOCKS
    "clocks_event_reasons.active,ecc.errors.uncorrected.volatile.total,retired_pages.pending "
    "--format=csv,noheader,nounits";
constexpr const char* kGpuQueryOld = GPU_FIELDS_BEFORE_CLOCKS
    "clocks_throttle_reasons.active,ecc.errors.uncorrected.volatile.total,retired_pages.pending "
    "--format=csv,noheader,nounits";
// As asked of an nvidia-smi that refused retired_pages.pending.
constexpr const char* kGpuQueryNoRetired = GPU_FIELDS_BEFORE_CLOCKS
    "clocks_event_reasons.active,ecc.errors.uncorrected.volatile.total --format=csv,noheader,nounits";
constexpr const char* kGpuQueryOldNoRetired = GPU_FIELDS_BEFORE_CLOCKS
    "clocks_throttle_reasons.active,ecc.errors.uncorrected.volatile.total --format=csv,noheader,nounits";
#undef GPU_FIELDS_BEFORE_CLOCKS
constexpr const char* kAppsQuery =
    "--query-compute-apps=pid,process_name,used_memory,gpu_uuid --format=csv,noheader,nounits";
constexpr const char* kRemapQuery =
    "--query-remapped-rows=gpu_uuid,remapped_rows.pending,remapped_rows.failure --format=csv,noheader,nounits";

class NvidiaSmiGpuReaderTest : public ::testing::Test {
 protected:
  // The invocations the stand-in logged, one line each.
  std::vector<std::string> Invocations() const {
    std::ifstream in(log_path_);
    std::vector<std::string> lines;
    for (std::string line; std::getline(in, line);) lines.push_back(line);
    return lines;
  }

  testing::TempDir dir_;
  std::string log_path_ = dir_.path() + "/nvidia-smi.log";
  testing::ScopedEnv log_{"FAKE_NVIDIA_SMI_LOG", log_path_};
  testing::ScopedEnv fixtures_{"FAKE_NVIDIA_SMI_FIXTURES", std::string(GPUCTL_FIXTURES_DIR)};
  testing::ScopedEnv old_{"FAKE_NVIDIA_SMI_OLD", std::nullopt};
  testing::ScopedEnv fail_{"FAKE_NVIDIA_SMI_FAIL", std::nullopt};
  testing::ScopedEnv refuse_{"FAKE_NVIDIA_SMI_REFUSE", std::nullopt};
  testing::ScopedEnv retired_{"FAKE_NVIDIA_SMI_RETIRED_PAGES_PENDING", std::nullopt};
  testing::ScopedEnv remapped_{"FAKE_NVIDIA_SMI_REMAPPED_ROWS", std::nullopt};
  std::unique_ptr<CommandRunner> runner_ = MakeSubprocessRunner();
};

void ExpectCapturedH200WithItsProcess(const GpuReport& report) {
  EXPECT_EQ(report.source, GpuSourceKind::kNvidiaSmi);
  EXPECT_EQ(report.error, "");
  ASSERT_EQ(report.devices.size(), 1u);
  const GpuDevice& d = report.devices[0];
  EXPECT_EQ(d.index, 0u);
  EXPECT_EQ(d.uuid, "GPU-c6489789-7836-64bc-561f-33b9f6b86ea3");
  EXPECT_EQ(d.name, "NVIDIA H200");
  EXPECT_EQ(d.pci_bus_id, "00000000:00:06.0");
  EXPECT_EQ(d.compute_capability, "9.0");
  EXPECT_EQ(d.driver_version, "580.159.04");
  EXPECT_EQ(d.memory_total_bytes, 143771 * kMiB);
  EXPECT_EQ(d.memory_used_bytes, 0u);
  EXPECT_EQ(d.memory_free_bytes, 143156 * kMiB);
  EXPECT_EQ(d.temperature_c, 41u);
  EXPECT_DOUBLE_EQ(d.power_draw_w.value_or(0), 81.94);
  EXPECT_DOUBLE_EQ(d.power_limit_w.value_or(0), 700.0);
  EXPECT_THAT(d.clock_event_reasons, ElementsAre("gpu_idle"));
  EXPECT_EQ(d.ecc_uncorrected, 0u);
  ASSERT_EQ(d.processes.size(), 1u);
  EXPECT_EQ(d.processes[0].pid, 479u);
  EXPECT_EQ(d.processes[0].name, "python3");
  EXPECT_EQ(d.processes[0].used_memory_bytes, 20998 * kMiB);
  EXPECT_FALSE(d.lost);
}

TEST_F(NvidiaSmiGpuReaderTest, ReadsGpusAndProcessesFromTheCaptures) {
  NvidiaSmiGpuReader reader(kStandIn, *runner_);
  GpuReport report = reader.Read();
  ExpectCapturedH200WithItsProcess(report);
  EXPECT_THAT(Invocations(), ElementsAre(kGpuQuery, kAppsQuery, kRemapQuery));
  // As the capture's nvidia-smi -q says: no page retirement, rows remapped
  // without anything pending or failed.
  EXPECT_FALSE(report.devices[0].retired_pages_pending.has_value());
  EXPECT_EQ(report.devices[0].row_remap_pending, false);
  EXPECT_EQ(report.devices[0].row_remap_failure, false);
}

TEST_F(NvidiaSmiGpuReaderTest, ReadsPendingRetiredPagesAndRowRemapping) {
  testing::ScopedEnv retired("FAKE_NVIDIA_SMI_RETIRED_PAGES_PENDING", "Yes");
  testing::ScopedEnv remapped("FAKE_NVIDIA_SMI_REMAPPED_ROWS", "Yes No");
  NvidiaSmiGpuReader reader(kStandIn, *runner_);
  GpuReport report = reader.Read();
  EXPECT_EQ(report.error, "");
  ASSERT_EQ(report.devices.size(), 1u);
  EXPECT_EQ(report.devices[0].retired_pages_pending, true);
  EXPECT_EQ(report.devices[0].row_remap_pending, true);
  EXPECT_EQ(report.devices[0].row_remap_failure, false);

  testing::ScopedEnv failed("FAKE_NVIDIA_SMI_REMAPPED_ROWS", "No Yes");
  report = reader.Read();
  EXPECT_EQ(report.devices[0].row_remap_pending, false);
  EXPECT_EQ(report.devices[0].row_remap_failure, true);
}

// An nvidia-smi that knows neither retired_pages.pending nor
// --query-remapped-rows: the rest is read, the flags stay unknown, nothing is
// reported wrong, and the refused parts are not asked for again.
TEST_F(NvidiaSmiGpuReaderTest, OldNvidiaSmiRefusingTheFaultQueriesStillReads) {
  testing::ScopedEnv refuse("FAKE_NVIDIA_SMI_REFUSE", "retired_pages.pending,--query-remapped-rows");
  NvidiaSmiGpuReader reader(kStandIn, *runner_);
  GpuReport report = reader.Read();
  ExpectCapturedH200WithItsProcess(report);
  EXPECT_FALSE(report.devices[0].retired_pages_pending.has_value());
  EXPECT_FALSE(report.devices[0].row_remap_pending.has_value());
  EXPECT_FALSE(report.devices[0].row_remap_failure.has_value());
  EXPECT_THAT(Invocations(), ElementsAre(kGpuQuery, kGpuQueryNoRetired, kAppsQuery, kRemapQuery));

  ExpectCapturedH200WithItsProcess(reader.Read());
  EXPECT_THAT(Invocations(),
              ElementsAre(kGpuQuery, kGpuQueryNoRetired, kAppsQuery, kRemapQuery, kGpuQueryNoRetired, kAppsQuery));
}

// Both refusals in one query: each retry drops one field.
TEST_F(NvidiaSmiGpuReaderTest, DriverBefore535RefusingRetiredPagesToo) {
  testing::ScopedEnv old("FAKE_NVIDIA_SMI_OLD", "1");
  testing::ScopedEnv refuse("FAKE_NVIDIA_SMI_REFUSE", "retired_pages.pending");
  NvidiaSmiGpuReader reader(kStandIn, *runner_);
  ExpectCapturedH200WithItsProcess(reader.Read());
  EXPECT_THAT(Invocations(), ElementsAre(kGpuQuery, kGpuQueryOld, kGpuQueryOldNoRetired, kAppsQuery, kRemapQuery));
}

// A refused field gpuctl cannot do without is a failure, as before.
TEST_F(NvidiaSmiGpuReaderTest, RefusedRequiredFieldIsReported) {
  testing::ScopedEnv refuse("FAKE_NVIDIA_SMI_REFUSE", "memory.total");
  NvidiaSmiGpuReader reader(kStandIn, *runner_);
  GpuReport report = reader.Read();
  EXPECT_EQ(report.source, GpuSourceKind::kNone);
  EXPECT_EQ(report.error, "Field \"memory.total\" is not a valid field to query.");
  EXPECT_THAT(Invocations(), ElementsAre(kGpuQuery));
}

// The remapped-rows query failing otherwise keeps the GPU values and says why.
TEST_F(NvidiaSmiGpuReaderTest, UnreadableRemappedRowsAreReportedNotFatal) {
  testing::ScopedEnv remapped("FAKE_NVIDIA_SMI_REMAPPED_ROWS", "Maybe No");
  NvidiaSmiGpuReader reader(kStandIn, *runner_);
  GpuReport report = reader.Read();
  EXPECT_EQ(report.source, GpuSourceKind::kNvidiaSmi);
  ASSERT_EQ(report.devices.size(), 1u);
  EXPECT_EQ(report.devices[0].temperature_c, 41u);
  EXPECT_FALSE(report.devices[0].row_remap_pending.has_value());
  EXPECT_EQ(report.error,
            "cannot parse nvidia-smi output: nvidia-smi --query-remapped-rows line 1, remapped_rows.pending: "
            "cannot parse 'Maybe'");
  reader.Read();
  EXPECT_THAT(Invocations(), ElementsAre(kGpuQuery, kAppsQuery, kRemapQuery, kGpuQuery, kAppsQuery, kRemapQuery));
}

TEST_F(NvidiaSmiGpuReaderTest, NoProcessesIsAnEmptyList) {
  testing::ScopedEnv no_apps("FAKE_NVIDIA_SMI_NO_APPS", "1");
  NvidiaSmiGpuReader reader(kStandIn, *runner_);
  GpuReport report = reader.Read();
  EXPECT_EQ(report.source, GpuSourceKind::kNvidiaSmi);
  EXPECT_EQ(report.error, "");
  ASSERT_EQ(report.devices.size(), 1u);
  EXPECT_TRUE(report.devices[0].processes.empty());
}

TEST_F(NvidiaSmiGpuReaderTest, OldDriverIsAskedForTheThrottleFieldAndRemembered) {
  testing::ScopedEnv old("FAKE_NVIDIA_SMI_OLD", "1");
  NvidiaSmiGpuReader reader(kStandIn, *runner_);
  ExpectCapturedH200WithItsProcess(reader.Read());
  EXPECT_THAT(Invocations(), ElementsAre(kGpuQuery, kGpuQueryOld, kAppsQuery, kRemapQuery));

  ExpectCapturedH200WithItsProcess(reader.Read());
  EXPECT_THAT(Invocations(),
              ElementsAre(kGpuQuery, kGpuQueryOld, kAppsQuery, kRemapQuery, kGpuQueryOld, kAppsQuery, kRemapQuery));
}

TEST_F(NvidiaSmiGpuReaderTest, DriverFailureIsReportedNotThrown) {
  testing::ScopedEnv fail("FAKE_NVIDIA_SMI_FAIL", "no_driver");
  NvidiaSmiGpuReader reader(kStandIn, *runner_);
  GpuReport report = reader.Read();
  EXPECT_EQ(report.source, GpuSourceKind::kNone);
  EXPECT_TRUE(report.devices.empty());
  EXPECT_EQ(report.error,
            "NVIDIA-SMI has failed because it couldn't communicate with the NVIDIA driver. Make sure "
            "that the latest NVIDIA driver is installed and running.");
  EXPECT_THAT(Invocations(), ElementsAre(kGpuQuery));  // no retry, no apps query
}

TEST_F(NvidiaSmiGpuReaderTest, VersionMismatchIsReportedInNvidiaSmisWords) {
  testing::ScopedEnv fail("FAKE_NVIDIA_SMI_FAIL", "mismatch");
  NvidiaSmiGpuReader reader(kStandIn, *runner_);
  GpuReport report = reader.Read();
  EXPECT_EQ(report.source, GpuSourceKind::kNone);
  EXPECT_TRUE(report.devices.empty());
  EXPECT_EQ(report.error,
            "Failed to initialize NVML: Driver/library version mismatch; NVML library version: 580.159");
}

TEST_F(NvidiaSmiGpuReaderTest, HungNvidiaSmiIsKilledAtTheTimeout) {
  testing::ScopedEnv fail("FAKE_NVIDIA_SMI_FAIL", "hang");
  NvidiaSmiGpuReader reader(kStandIn, *runner_, 300ms);
  GpuReport report = reader.Read();
  EXPECT_EQ(report.source, GpuSourceKind::kNone);
  EXPECT_THAT(report.error, HasSubstr("did not finish within 300 ms"));
}

TEST_F(NvidiaSmiGpuReaderTest, MissingExecutableIsReported) {
  NvidiaSmiGpuReader reader("/nonexistent/bin/nvidia-smi", *runner_);
  GpuReport report = reader.Read();
  EXPECT_EQ(report.source, GpuSourceKind::kNone);
  EXPECT_THAT(report.error, StartsWith("cannot run '/nonexistent/bin/nvidia-smi'"));
}

// The stand-in finds the captures beside the checkout when not told where.
TEST_F(NvidiaSmiGpuReaderTest, StandInDefaultsToTheSharedFixtures) {
  testing::ScopedEnv no_dir("FAKE_NVIDIA_SMI_FIXTURES", std::nullopt);
  NvidiaSmiGpuReader reader(kStandIn, *runner_);
  ExpectCapturedH200WithItsProcess(reader.Read());
}

}  // namespace
}  // namespace gpuctl::sys
