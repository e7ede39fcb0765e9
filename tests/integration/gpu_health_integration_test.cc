// gpuctld's GPU side end to end: a fake libnvidia-ml.so.1 loaded through the
// real dlopen path, and the stand-in nvidia-smi (printing the real H200
// captures) found on PATH when NVML is missing.
#include <cstdlib>
#include <nlohmann/json.hpp>

#include "tests/integration/agent_fixture.h"

namespace gpuctl::testing {
namespace {

using nlohmann::json;

std::string FakeNvml() { return std::string(GPUCTL_BINARY_DIR) + "/tests/fake_nvml/libnvidia-ml.so.1"; }
std::string StandInBin() { return std::string(GPUCTL_SOURCE_DIR) + "/tests/fakes/bin"; }

class GpuHealthIntegration : public AgentFixture {};

TEST_F(GpuHealthIntegration, NvmlThroughDlopen) {
  StartAgent({"--nvml-library", FakeNvml()}, {{"FAKE_NVML_SCENARIO", "two_gpus"}});
  RunResult r = Gpuctl({"-o", "json", "health"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  json doc = json::parse(r.out);
  EXPECT_EQ(doc["gpu_source"], "nvml");
  ASSERT_EQ(doc["gpus"].size(), 2u);
  const json& h200 = doc["gpus"][0];
  EXPECT_EQ(h200["uuid"], "GPU-c6489789-7836-64bc-561f-33b9f6b86ea3");
  EXPECT_EQ(h200["name"], "NVIDIA H200");
  EXPECT_EQ(h200["compute_capability"], "9.0");
  EXPECT_EQ(h200["memory_total_bytes"], 143771ull << 20);
  EXPECT_EQ(h200["processes"][0]["pid"], 479);
  EXPECT_EQ(h200["processes"][0]["used_memory_bytes"], 20998ull << 20);
  EXPECT_TRUE(doc["gpus"][1]["ecc_uncorrected"].is_null());  // NOT_SUPPORTED stays null
}

TEST_F(GpuHealthIntegration, VersionMismatchIsReportedAsSuch) {
  StartAgent({"--nvml-library", FakeNvml()}, {{"FAKE_NVML_SCENARIO", "mismatch"}});
  RunResult r = Gpuctl({"-o", "json", "health"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  json doc = json::parse(r.out);
  EXPECT_EQ(doc["gpu_source"], "none");
  EXPECT_EQ(doc["gpu_error"], "Failed to initialize NVML: Driver/library version mismatch");
  r = Gpuctl({"health"});
  EXPECT_NE(r.out.find("Driver/library version mismatch"), std::string::npos) << r.out;
}

TEST_F(GpuHealthIntegration, NvidiaSmiFallbackOnPath) {
  std::string path = StandInBin() + ":" + std::getenv("PATH");
  StartAgent({"--nvidia-smi", "nvidia-smi"}, {{"PATH", path}});
  RunResult r = Gpuctl({"-o", "json", "health"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  json doc = json::parse(r.out);
  EXPECT_EQ(doc["gpu_source"], "nvidia-smi");
  ASSERT_EQ(doc["gpus"].size(), 1u);
  const json& g = doc["gpus"][0];
  // Values from query-gpu-nounits.csv and query-apps.csv.
  EXPECT_EQ(g["pci_bus_id"], "00000000:00:06.0");
  EXPECT_EQ(g["driver_version"], "580.159.04");
  EXPECT_EQ(g["memory_total_bytes"], 143771ull << 20);
  EXPECT_EQ(g["temperature_c"], 41);
  EXPECT_DOUBLE_EQ(g["power_draw_w"].get<double>(), 81.94);
  EXPECT_EQ(g["clock_event_reasons"], json::array({"gpu_idle"}));
  EXPECT_EQ(g["processes"][0]["pid"], 479);
  r = Gpuctl({"health"});
  EXPECT_NE(r.out.find("NVIDIA H200"), std::string::npos) << r.out;
}

}  // namespace
}  // namespace gpuctl::testing
