// NvmlGpuReader through a real dlopen of the fake library
// (tests/fakes/fake_nvml/fake_nvml.c); its GPU 0 mirrors the H200 capture.
#include "agents/sys/nvml_gpu_reader.h"

#include <dlfcn.h>
#include <unistd.h>

#include <fstream>
#include <map>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "tests/fakes/fake_nvml_path.h"
#include "tests/fakes/scoped_env.h"
#include "common/units.h"

namespace gpuctl::sys {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;

// The same fake as an older driver: no fault queries exported.
constexpr const char* kOldFakeNvml = GPUCTL_BINARY_DIR "/tests/fake_nvml_old/libnvidia-ml.so.1";

std::string SelfComm() {
  std::ifstream in("/proc/self/comm");
  std::string comm;
  std::getline(in, comm);
  return comm;
}

class NvmlGpuReaderTest : public ::testing::Test {
 protected:
  void SetUp() override {
    // Our own handle keeps the fake loaded so its counters survive the
    // readers' dlclose.
    fake_ = dlopen(testing::kFakeNvmlLibrary, RTLD_NOW | RTLD_LOCAL);
    ASSERT_NE(fake_, nullptr) << dlerror();
    init_count_ = reinterpret_cast<int (*)()>(dlsym(fake_, "fakeNvmlInitCount"));
    ASSERT_NE(init_count_, nullptr);
  }
  void TearDown() override {
    if (fake_ != nullptr) dlclose(fake_);
  }

  static ProcessNameLookup Names(std::map<uint32_t, std::string> names) {
    return [names](uint32_t pid) {
      auto it = names.find(pid);
      return it == names.end() ? std::string("?") : it->second;
    };
  }

  testing::ScopedEnv scenario_{"FAKE_NVML_SCENARIO", "two_gpus"};
  void* fake_ = nullptr;
  int (*init_count_)() = nullptr;
};

TEST_F(NvmlGpuReaderTest, ReadsBothGpus) {
  auto reader = NvmlGpuReader::Open(testing::kFakeNvmlLibrary, Names({{479, "python3"}}));
  ASSERT_TRUE(reader.ok()) << reader.status().ToString();
  GpuReport report = (*reader)->Read();
  EXPECT_EQ(report.source, GpuSourceKind::kNvml);
  EXPECT_EQ(report.error, "");
  ASSERT_EQ(report.devices.size(), 2u);

  const GpuDevice& h200 = report.devices[0];
  EXPECT_EQ(h200.index, 0u);
  EXPECT_EQ(h200.uuid, "GPU-c6489789-7836-64bc-561f-33b9f6b86ea3");
  EXPECT_EQ(h200.name, "NVIDIA H200");
  EXPECT_EQ(h200.pci_bus_id, "00000000:00:06.0");
  EXPECT_EQ(h200.compute_capability, "9.0");
  EXPECT_EQ(h200.driver_version, "580.159.04");
  EXPECT_EQ(h200.memory_total_bytes, 143771 * kMiB);
  EXPECT_EQ(h200.memory_free_bytes, 143156 * kMiB);
  // nvmlDeviceGetMemoryInfo counts the driver's reservation as used.
  EXPECT_EQ(h200.memory_used_bytes, (143771 - 143156) * kMiB);
  EXPECT_EQ(h200.utilization_gpu_pct, 0u);
  EXPECT_EQ(h200.utilization_memory_pct, 0u);
  EXPECT_EQ(h200.temperature_c, 41u);
  EXPECT_DOUBLE_EQ(h200.power_draw_w.value_or(0), 81.94);
  EXPECT_DOUBLE_EQ(h200.power_limit_w.value_or(0), 700.0);
  EXPECT_THAT(h200.clock_event_reasons, ElementsAre("gpu_idle"));
  EXPECT_EQ(h200.ecc_uncorrected, 0u);
  ASSERT_EQ(h200.processes.size(), 1u);
  EXPECT_EQ(h200.processes[0].pid, 479u);
  EXPECT_EQ(h200.processes[0].name, "python3");
  EXPECT_EQ(h200.processes[0].used_memory_bytes, 20998 * kMiB);

  const GpuDevice& geforce = report.devices[1];
  EXPECT_EQ(geforce.index, 1u);
  EXPECT_EQ(geforce.name, "NVIDIA GeForce RTX 4090");
  EXPECT_EQ(geforce.pci_bus_id, "00000000:41:00.0");
  EXPECT_EQ(geforce.compute_capability, "8.9");
  EXPECT_EQ(geforce.memory_total_bytes, 24564 * kMiB);
  EXPECT_EQ(geforce.utilization_gpu_pct, 87u);
  EXPECT_EQ(geforce.utilization_memory_pct, 45u);
  EXPECT_EQ(geforce.temperature_c, 63u);
  EXPECT_DOUBLE_EQ(geforce.power_draw_w.value_or(0), 312.5);
  EXPECT_DOUBLE_EQ(geforce.power_limit_w.value_or(0), 450.0);
  EXPECT_THAT(geforce.clock_event_reasons, ElementsAre("sw_power_cap"));
  ASSERT_EQ(geforce.processes.size(), 1u);
  EXPECT_EQ(geforce.processes[0].pid, static_cast<uint32_t>(getpid()));
  EXPECT_EQ(geforce.processes[0].used_memory_bytes, 1024 * kMiB);
}

// NOT_SUPPORTED is an answer, not a failure: the field stays empty and
// nothing is reported as wrong.
TEST_F(NvmlGpuReaderTest, NotSupportedLeavesTheFieldEmpty) {
  auto reader = NvmlGpuReader::Open(testing::kFakeNvmlLibrary, Names({}));
  ASSERT_TRUE(reader.ok()) << reader.status().ToString();
  GpuReport report = (*reader)->Read();
  ASSERT_EQ(report.devices.size(), 2u);
  EXPECT_TRUE(report.devices[0].ecc_uncorrected.has_value());
  EXPECT_FALSE(report.devices[1].ecc_uncorrected.has_value());
  EXPECT_EQ(report.error, "");
}

// As captured: the H200 remaps rows (nothing pending, no failure) and has
// no page retirement; the GeForce has neither. Unknown is not "no".
TEST_F(NvmlGpuReaderTest, MemoryRepairStateAsCaptured) {
  auto reader = NvmlGpuReader::Open(testing::kFakeNvmlLibrary, Names({}));
  ASSERT_TRUE(reader.ok()) << reader.status().ToString();
  GpuReport report = (*reader)->Read();
  EXPECT_EQ(report.error, "");
  ASSERT_EQ(report.devices.size(), 2u);
  const GpuDevice& h200 = report.devices[0];
  EXPECT_EQ(h200.row_remap_pending, false);
  EXPECT_EQ(h200.row_remap_failure, false);
  EXPECT_EQ(h200.retired_pages_pending, std::nullopt);
  EXPECT_FALSE(h200.lost);
  const GpuDevice& geforce = report.devices[1];
  EXPECT_EQ(geforce.row_remap_pending, std::nullopt);
  EXPECT_EQ(geforce.row_remap_failure, std::nullopt);
  EXPECT_EQ(geforce.retired_pages_pending, std::nullopt);
  EXPECT_FALSE(geforce.lost);
}

TEST_F(NvmlGpuReaderTest, RowRemapPendingIsRead) {
  testing::ScopedEnv scenario("FAKE_NVML_SCENARIO", "row_remap_pending");
  auto reader = NvmlGpuReader::Open(testing::kFakeNvmlLibrary, Names({}));
  ASSERT_TRUE(reader.ok()) << reader.status().ToString();
  GpuReport report = (*reader)->Read();
  EXPECT_EQ(report.error, "");
  ASSERT_EQ(report.devices.size(), 2u);
  EXPECT_EQ(report.devices[0].row_remap_pending, true);
  EXPECT_EQ(report.devices[0].row_remap_failure, false);
  EXPECT_EQ(report.devices[1].row_remap_pending, std::nullopt);
}

TEST_F(NvmlGpuReaderTest, RowRemapFailureIsRead) {
  testing::ScopedEnv scenario("FAKE_NVML_SCENARIO", "row_remap_failure");
  auto reader = NvmlGpuReader::Open(testing::kFakeNvmlLibrary, Names({}));
  ASSERT_TRUE(reader.ok()) << reader.status().ToString();
  GpuReport report = (*reader)->Read();
  EXPECT_EQ(report.error, "");
  ASSERT_EQ(report.devices.size(), 2u);
  EXPECT_EQ(report.devices[0].row_remap_failure, true);
  EXPECT_EQ(report.devices[0].row_remap_pending, false);
  EXPECT_EQ(report.devices[1].row_remap_failure, std::nullopt);
}

// NVML_FEATURE_ENABLED is pending, NVML_FEATURE_DISABLED is not.
TEST_F(NvmlGpuReaderTest, RetiredPagesPendingIsRead) {
  testing::ScopedEnv scenario("FAKE_NVML_SCENARIO", "retired_pages_pending");
  auto reader = NvmlGpuReader::Open(testing::kFakeNvmlLibrary, Names({}));
  ASSERT_TRUE(reader.ok()) << reader.status().ToString();
  GpuReport report = (*reader)->Read();
  EXPECT_EQ(report.error, "");
  ASSERT_EQ(report.devices.size(), 2u);
  EXPECT_EQ(report.devices[0].retired_pages_pending, true);
  EXPECT_EQ(report.devices[1].retired_pages_pending, false);
}

// A lost GPU stays listed, marked lost, named once in the error, and is
// asked nothing more; the other GPU reads as usual.
TEST_F(NvmlGpuReaderTest, LostGpuIsListedAsLost) {
  testing::ScopedEnv scenario("FAKE_NVML_SCENARIO", "gpu_lost");
  auto reader = NvmlGpuReader::Open(testing::kFakeNvmlLibrary, Names({{479, "python3"}}));
  ASSERT_TRUE(reader.ok()) << reader.status().ToString();
  GpuReport report = (*reader)->Read();
  EXPECT_EQ(report.source, GpuSourceKind::kNvml);
  EXPECT_EQ(report.error, "GPU 1: nvmlDeviceGetUUID: GPU is lost");
  ASSERT_EQ(report.devices.size(), 2u);

  const GpuDevice& healthy = report.devices[0];
  EXPECT_FALSE(healthy.lost);
  EXPECT_EQ(healthy.uuid, "GPU-c6489789-7836-64bc-561f-33b9f6b86ea3");
  EXPECT_EQ(healthy.row_remap_pending, false);
  EXPECT_EQ(healthy.processes.size(), 1u);

  const GpuDevice& lost = report.devices[1];
  EXPECT_TRUE(lost.lost);
  EXPECT_EQ(lost.index, 1u);
  EXPECT_EQ(lost.driver_version, "580.159.04");  // the driver still answers
  EXPECT_EQ(lost.uuid, "");
  EXPECT_EQ(lost.pci_bus_id, "");
  EXPECT_FALSE(lost.memory_total_bytes.has_value());
  EXPECT_FALSE(lost.temperature_c.has_value());
  EXPECT_EQ(lost.row_remap_pending, std::nullopt);
  EXPECT_TRUE(lost.processes.empty());
}

// A GPU lost between two readings keeps the identity the first one saw, so
// the fault watch can drain it by uuid and bus id.
TEST_F(NvmlGpuReaderTest, GpuLostAfterAReadingKeepsItsIdentity) {
  auto lose_gpu = reinterpret_cast<void (*)(unsigned)>(dlsym(fake_, "fakeNvmlLoseGpu"));
  ASSERT_NE(lose_gpu, nullptr);
  auto reader = NvmlGpuReader::Open(testing::kFakeNvmlLibrary, Names({}));
  ASSERT_TRUE(reader.ok()) << reader.status().ToString();
  ASSERT_EQ((*reader)->Read().devices.size(), 2u);

  lose_gpu(1);
  GpuReport report = (*reader)->Read();
  EXPECT_EQ(report.error, "GPU 1: nvmlDeviceGetUUID: GPU is lost");
  ASSERT_EQ(report.devices.size(), 2u);
  EXPECT_FALSE(report.devices[0].lost);
  const GpuDevice& lost = report.devices[1];
  EXPECT_TRUE(lost.lost);
  EXPECT_EQ(lost.uuid, "GPU-5d2a0b7e-1c4f-4e8a-9b3d-2f6e8a7c1d90");
  EXPECT_EQ(lost.name, "NVIDIA GeForce RTX 4090");
  EXPECT_EQ(lost.pci_bus_id, "00000000:41:00.0");
  EXPECT_EQ(lost.compute_capability, "8.9");
  EXPECT_FALSE(lost.temperature_c.has_value());  // values are not carried over
  EXPECT_TRUE(lost.processes.empty());

  // Still lost at the next reading, still named.
  report = (*reader)->Read();
  ASSERT_EQ(report.devices.size(), 2u);
  EXPECT_TRUE(report.devices[1].lost);
  EXPECT_EQ(report.devices[1].uuid, "GPU-5d2a0b7e-1c4f-4e8a-9b3d-2f6e8a7c1d90");
}

// A driver without nvmlDeviceGetRemappedRows and
// nvmlDeviceGetRetiredPagesPendingStatus: those stay unknown, the rest reads.
TEST_F(NvmlGpuReaderTest, OlderDriverWithoutFaultQueriesStillReads) {
  testing::ScopedEnv scenario("FAKE_NVML_SCENARIO", "row_remap_pending");
  void* old = dlopen(kOldFakeNvml, RTLD_NOW | RTLD_LOCAL);
  ASSERT_NE(old, nullptr) << dlerror();
  EXPECT_EQ(dlsym(old, "nvmlDeviceGetRemappedRows"), nullptr);
  EXPECT_EQ(dlsym(old, "nvmlDeviceGetRetiredPagesPendingStatus"), nullptr);
  dlclose(old);

  auto reader = NvmlGpuReader::Open(kOldFakeNvml, Names({}));
  ASSERT_TRUE(reader.ok()) << reader.status().ToString();
  GpuReport report = (*reader)->Read();
  EXPECT_EQ(report.error, "");
  ASSERT_EQ(report.devices.size(), 2u);
  EXPECT_EQ(report.devices[0].uuid, "GPU-c6489789-7836-64bc-561f-33b9f6b86ea3");
  EXPECT_EQ(report.devices[0].row_remap_pending, std::nullopt);
  EXPECT_EQ(report.devices[0].row_remap_failure, std::nullopt);
  EXPECT_EQ(report.devices[0].retired_pages_pending, std::nullopt);
}

TEST_F(NvmlGpuReaderTest, DefaultLookupNamesProcessesFromProc) {
  auto reader = NvmlGpuReader::Open(testing::kFakeNvmlLibrary);
  ASSERT_TRUE(reader.ok()) << reader.status().ToString();
  GpuReport report = (*reader)->Read();
  ASSERT_EQ(report.devices.size(), 2u);
  ASSERT_EQ(report.devices[1].processes.size(), 1u);
  EXPECT_EQ(report.devices[1].processes[0].name, SelfComm());
  EXPECT_FALSE(SelfComm().empty());
}

TEST_F(NvmlGpuReaderTest, ProcCommLookupIsRootedAndTrimmed) {
  auto names = ProcCommLookup("/");
  EXPECT_EQ(names(static_cast<uint32_t>(getpid())), SelfComm());
  EXPECT_EQ(names(0), "");  // no /proc/0
}

TEST_F(NvmlGpuReaderTest, StaysInitialisedAcrossReadsAndShutsDownOnDestruction) {
  ASSERT_EQ(init_count_(), 0);
  {
    auto reader = NvmlGpuReader::Open(testing::kFakeNvmlLibrary, Names({}));
    ASSERT_TRUE(reader.ok()) << reader.status().ToString();
    EXPECT_EQ(init_count_(), 1);
    EXPECT_EQ((*reader)->Read().devices.size(), 2u);
    EXPECT_EQ((*reader)->Read().devices.size(), 2u);
    EXPECT_EQ(init_count_(), 1);
  }
  EXPECT_EQ(init_count_(), 0);
}

TEST_F(NvmlGpuReaderTest, VersionMismatchSaysWhatNvidiaSmiSays) {
  testing::ScopedEnv mismatch("FAKE_NVML_SCENARIO", "mismatch");
  auto reader = NvmlGpuReader::Open(testing::kFakeNvmlLibrary);
  ASSERT_FALSE(reader.ok());
  EXPECT_EQ(reader.status().code(), ErrorCode::kFailedPrecondition);
  EXPECT_EQ(reader.status().message(), "Failed to initialize NVML: Driver/library version mismatch");
  EXPECT_EQ(reader.status().message(), kNvmlVersionMismatch);
  EXPECT_EQ(init_count_(), 0);
}

TEST_F(NvmlGpuReaderTest, OtherInitFailureUsesNvmlsErrorString) {
  testing::ScopedEnv no_driver("FAKE_NVML_SCENARIO", "no_driver");
  auto reader = NvmlGpuReader::Open(testing::kFakeNvmlLibrary);
  ASSERT_FALSE(reader.ok());
  EXPECT_EQ(reader.status().code(), ErrorCode::kUnavailable);
  EXPECT_EQ(reader.status().message(), "Failed to initialize NVML: Driver Not Loaded");
}

TEST_F(NvmlGpuReaderTest, NoDevicesIsAWorkingSourceWithAReason) {
  testing::ScopedEnv none("FAKE_NVML_SCENARIO", "no_devices");
  auto reader = NvmlGpuReader::Open(testing::kFakeNvmlLibrary);
  ASSERT_TRUE(reader.ok()) << reader.status().ToString();
  GpuReport report = (*reader)->Read();
  EXPECT_EQ(report.source, GpuSourceKind::kNvml);
  EXPECT_TRUE(report.devices.empty());
  EXPECT_EQ(report.error, "No devices were found");
}

TEST_F(NvmlGpuReaderTest, MissingLibraryIsNotFound) {
  auto by_path = NvmlGpuReader::Open("/nonexistent/libnvidia-ml.so.1");
  ASSERT_FALSE(by_path.ok());
  EXPECT_EQ(by_path.status().code(), ErrorCode::kNotFound);
  EXPECT_EQ(by_path.status().message(), "/nonexistent/libnvidia-ml.so.1 not found");

  auto by_name = NvmlGpuReader::Open("libgpuctl-no-such-nvml.so.1");
  ASSERT_FALSE(by_name.ok());
  EXPECT_EQ(by_name.status().message(), "libgpuctl-no-such-nvml.so.1 not found");
}

// A library that loads but is not NVML (here: libc) lacks the entry points.
TEST_F(NvmlGpuReaderTest, LibraryWithoutNvmlEntryPointsIsRefused) {
  auto reader = NvmlGpuReader::Open("libc.so.6");
  ASSERT_FALSE(reader.ok());
  EXPECT_EQ(reader.status().code(), ErrorCode::kNotFound);
  EXPECT_THAT(reader.status().message(), HasSubstr("libc.so.6 has no nvmlInit_v2"));
}

}  // namespace
}  // namespace gpuctl::sys
