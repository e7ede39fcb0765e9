#include "agents/health/health_sampler.h"

#include <gtest/gtest.h>

#include "tests/fakes/fake_clock.h"
#include "tests/fakes/fake_gpu_reader.h"
#include "tests/fakes/temp_dir.h"

namespace gpuctl::health {
namespace {

using namespace std::chrono_literals;
using gpuctl::testing::FakeClock;
using gpuctl::testing::FakeGpuReader;
using gpuctl::testing::TempDir;

sys::GpuReport ReportNamed(const std::string& name) {
  sys::GpuReport report;
  report.source = sys::GpuSourceKind::kNvml;
  sys::GpuDevice device;
  device.name = name;
  report.devices.push_back(device);
  return report;
}

class HealthSamplerTest : public ::testing::Test {
 protected:
  HealthSamplerTest() : fs_(dir_.path()) {
    dir_.WriteFile("proc/meminfo", "MemTotal: 4000 kB\nMemAvailable: 3000 kB\n");
    gpus_.SetReport(ReportNamed("NVIDIA H200"));
  }
  TempDir dir_;
  sys::HostFs fs_;
  FakeClock clock_;
  FakeGpuReader gpus_;
};

TEST_F(HealthSamplerTest, ReusesTheGpuReportWhileYoungerThanMaxAge) {
  HealthSampler sampler(fs_, gpus_, clock_, 500ms);
  auto first = sampler.Sample();
  ASSERT_TRUE(first.ok()) << first.status().ToString();
  EXPECT_EQ(gpus_.reads(), 1);
  ASSERT_EQ(first->gpus.devices.size(), 1u);
  EXPECT_EQ(first->gpus.devices[0].name, "NVIDIA H200");
  EXPECT_EQ(first->sampled_at, clock_.WallNow());

  gpus_.SetReport(ReportNamed("changed"));
  dir_.WriteFile("proc/meminfo", "MemTotal: 4000 kB\nMemAvailable: 1000 kB\n");
  clock_.Advance(499ms);
  auto cached = sampler.Sample();
  ASSERT_TRUE(cached.ok());
  EXPECT_EQ(gpus_.reads(), 1);
  EXPECT_EQ(cached->gpus.devices[0].name, "NVIDIA H200");
  EXPECT_EQ(cached->host.mem_available_bytes, 1000u * 1024) << "host figures are always fresh";
  EXPECT_EQ(cached->sampled_at, clock_.WallNow());
}

TEST_F(HealthSamplerTest, RereadsTheGpusOnceMaxAgeHasPassed) {
  HealthSampler sampler(fs_, gpus_, clock_, 500ms);
  ASSERT_TRUE(sampler.Sample().ok());
  gpus_.SetReport(ReportNamed("changed"));
  clock_.Advance(500ms);
  auto fresh = sampler.Sample();
  ASSERT_TRUE(fresh.ok());
  EXPECT_EQ(gpus_.reads(), 2);
  EXPECT_EQ(fresh->gpus.devices[0].name, "changed");

  // The cache restarts from the re-read, not from the first read.
  clock_.Advance(300ms);
  ASSERT_TRUE(sampler.Sample().ok());
  EXPECT_EQ(gpus_.reads(), 2);
  clock_.Advance(200ms);
  ASSERT_TRUE(sampler.Sample().ok());
  EXPECT_EQ(gpus_.reads(), 3);
}

TEST_F(HealthSamplerTest, PassesOnAHostFailure) {
  TempDir empty;
  sys::HostFs broken(empty.path());
  HealthSampler sampler(broken, gpus_, clock_, 500ms);
  auto snapshot = sampler.Sample();
  ASSERT_FALSE(snapshot.ok());
  EXPECT_EQ(snapshot.status().code(), ErrorCode::kNotFound);
}

}  // namespace
}  // namespace gpuctl::health
