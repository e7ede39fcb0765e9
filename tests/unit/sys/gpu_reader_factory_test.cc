// MakeGpuReader's choice: NVML (the fake library), else nvidia-smi (the
// stand-in on PATH), else a reader that says why there are no GPUs.
#include <dlfcn.h>

#include <fstream>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "agents/sys/command_runner.h"
#include "agents/sys/gpu_reader.h"
#include "agents/sys/nvml_gpu_reader.h"
#include "tests/fakes/fake_nvml_path.h"
#include "tests/fakes/scoped_env.h"
#include "tests/fakes/temp_dir.h"
#include "tests/fakes/skip_policy.h"

namespace gpuctl::sys {
namespace {

using ::testing::IsEmpty;
using ::testing::SizeIs;

constexpr const char* kMissingNvml = "/nonexistent/libnvidia-ml.so.1";
constexpr const char* kStandInDir = GPUCTL_SOURCE_DIR "/tests/fakes/bin";
constexpr const char* kNoDriverText =
    "NVIDIA-SMI has failed because it couldn't communicate with the NVIDIA driver. Make sure that "
    "the latest NVIDIA driver is installed and running.";

class GpuReaderFactoryTest : public ::testing::Test {
 protected:
  // PATH with the stand-in nvidia-smi first (the stand-in itself needs bash,
  // sed and tr from the system directories).
  std::string StandInPath() const { return std::string(kStandInDir) + ":/usr/bin:/bin"; }

  std::vector<std::string> Invocations() const {
    std::ifstream in(log_path_);
    std::vector<std::string> lines;
    for (std::string line; std::getline(in, line);) lines.push_back(line);
    return lines;
  }

  GpuReaderOptions Options(std::string nvml) const {
    GpuReaderOptions options;
    options.nvml_library = std::move(nvml);
    return options;
  }

  testing::TempDir dir_;
  testing::TempDir empty_dir_;
  std::string log_path_ = dir_.path() + "/nvidia-smi.log";
  testing::ScopedEnv log_{"FAKE_NVIDIA_SMI_LOG", log_path_};
  testing::ScopedEnv fixtures_{"FAKE_NVIDIA_SMI_FIXTURES", std::string(GPUCTL_FIXTURES_DIR)};
  testing::ScopedEnv fail_{"FAKE_NVIDIA_SMI_FAIL", std::nullopt};
  testing::ScopedEnv old_{"FAKE_NVIDIA_SMI_OLD", std::nullopt};
  testing::ScopedEnv scenario_{"FAKE_NVML_SCENARIO", "two_gpus"};
  testing::ScopedEnv path_{"PATH", StandInPath()};
  std::unique_ptr<CommandRunner> runner_ = MakeSubprocessRunner();
};

TEST_F(GpuReaderFactoryTest, PrefersNvmlWhenItInitialises) {
  auto reader = MakeGpuReader(Options(testing::kFakeNvmlLibrary), *runner_);
  GpuReport report = reader->Read();
  EXPECT_EQ(report.source, GpuSourceKind::kNvml);
  EXPECT_EQ(report.error, "");
  EXPECT_THAT(report.devices, SizeIs(2));
  EXPECT_THAT(Invocations(), IsEmpty());  // nvidia-smi never ran
}

TEST_F(GpuReaderFactoryTest, FallsBackToNvidiaSmiWhenNvmlIsMissing) {
  auto reader = MakeGpuReader(Options(kMissingNvml), *runner_);
  // The probe: --query-gpu, --query-compute-apps, --query-remapped-rows.
  EXPECT_THAT(Invocations(), SizeIs(3));
  GpuReport report = reader->Read();
  EXPECT_EQ(report.source, GpuSourceKind::kNvidiaSmi);
  EXPECT_EQ(report.error, "");
  ASSERT_THAT(report.devices, SizeIs(1));
  EXPECT_EQ(report.devices[0].name, "NVIDIA H200");
  ASSERT_THAT(report.devices[0].processes, SizeIs(1));
  EXPECT_EQ(report.devices[0].processes[0].name, "python3");
  EXPECT_THAT(Invocations(), SizeIs(6));
}

TEST_F(GpuReaderFactoryTest, FallsBackToNvidiaSmiWhenNvmlDoesNotInitialise) {
  testing::ScopedEnv no_driver("FAKE_NVML_SCENARIO", "no_driver");
  auto reader = MakeGpuReader(Options(testing::kFakeNvmlLibrary), *runner_);
  EXPECT_EQ(reader->Read().source, GpuSourceKind::kNvidiaSmi);
}

TEST_F(GpuReaderFactoryTest, NeitherThereCombinesBothReasons) {
  testing::ScopedEnv path("PATH", empty_dir_.path());
  auto reader = MakeGpuReader(Options(kMissingNvml), *runner_);
  for (int i = 0; i < 2; ++i) {
    GpuReport report = reader->Read();
    EXPECT_EQ(report.source, GpuSourceKind::kNone);
    EXPECT_THAT(report.devices, IsEmpty());
    EXPECT_EQ(report.error, "no NVIDIA driver: /nonexistent/libnvidia-ml.so.1 not found; nvidia-smi not on PATH");
  }
}

// The default options on a host without a driver (like the build machine).
TEST_F(GpuReaderFactoryTest, DefaultOptionsOnAHostWithoutADriver) {
  if (void* real = dlopen("libnvidia-ml.so.1", RTLD_NOW | RTLD_LOCAL)) {
    dlclose(real);
    GPUCTL_SKIP_ALLOWED(kGpu) << "this host has an NVIDIA driver";
  }
  testing::ScopedEnv path("PATH", empty_dir_.path());
  auto reader = MakeGpuReader(GpuReaderOptions{}, *runner_);
  GpuReport report = reader->Read();
  EXPECT_EQ(report.source, GpuSourceKind::kNone);
  EXPECT_EQ(report.error, "no NVIDIA driver: libnvidia-ml.so.1 not found; nvidia-smi not on PATH");
}

TEST_F(GpuReaderFactoryTest, BrokenDriverGivesBothToolsWords) {
  testing::ScopedEnv nvml("FAKE_NVML_SCENARIO", "no_driver");
  testing::ScopedEnv smi("FAKE_NVIDIA_SMI_FAIL", "no_driver");
  auto reader = MakeGpuReader(Options(testing::kFakeNvmlLibrary), *runner_);
  GpuReport report = reader->Read();
  EXPECT_EQ(report.source, GpuSourceKind::kNone);
  EXPECT_EQ(report.error, std::string("Failed to initialize NVML: Driver Not Loaded; ") + kNoDriverText);
}

TEST_F(GpuReaderFactoryTest, VersionMismatchIsNotHiddenBehindTheFallback) {
  testing::ScopedEnv nvml("FAKE_NVML_SCENARIO", "mismatch");
  for (const char* smi_failure : {"mismatch", "no_driver"}) {
    testing::ScopedEnv smi("FAKE_NVIDIA_SMI_FAIL", smi_failure);
    auto reader = MakeGpuReader(Options(testing::kFakeNvmlLibrary), *runner_);
    GpuReport report = reader->Read();
    EXPECT_EQ(report.source, GpuSourceKind::kNone);
    EXPECT_THAT(report.devices, IsEmpty());
    EXPECT_EQ(report.error, "Failed to initialize NVML: Driver/library version mismatch") << smi_failure;
  }
  testing::ScopedEnv path("PATH", empty_dir_.path());
  EXPECT_EQ(MakeGpuReader(Options(testing::kFakeNvmlLibrary), *runner_)->Read().error, kNvmlVersionMismatch);
}

TEST_F(GpuReaderFactoryTest, BothDisabled) {
  GpuReaderOptions options;
  options.nvml_library = "";
  options.nvidia_smi = "";
  GpuReport report = MakeGpuReader(options, *runner_)->Read();
  EXPECT_EQ(report.source, GpuSourceKind::kNone);
  EXPECT_EQ(report.error, "NVML disabled; nvidia-smi disabled");
  EXPECT_THAT(Invocations(), IsEmpty());
}

TEST_F(GpuReaderFactoryTest, NvidiaSmiByAbsolutePath) {
  testing::ScopedEnv path("PATH", "/usr/bin:/bin");
  GpuReaderOptions options = Options(kMissingNvml);
  options.nvidia_smi = std::string(kStandInDir) + "/nvidia-smi";
  EXPECT_EQ(MakeGpuReader(options, *runner_)->Read().source, GpuSourceKind::kNvidiaSmi);

  options.nvidia_smi = "/nonexistent/nvidia-smi";
  EXPECT_EQ(MakeGpuReader(options, *runner_)->Read().error,
            "no NVIDIA driver: /nonexistent/libnvidia-ml.so.1 not found; /nonexistent/nvidia-smi not "
            "found or not executable");
}

}  // namespace
}  // namespace gpuctl::sys
