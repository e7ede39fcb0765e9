#include <gtest/gtest.h>

#include "client/agent_address.h"
#include "client/output/health_json.h"
#include "client/output/health_text.h"
#include "client/output/table.h"

namespace gpuctl::client {
namespace {

v1::HealthSnapshot SampleSnapshot() {
  v1::HealthSnapshot s;
  s.set_sampled_at_unix_ms(1764530000000);
  v1::HostHealth* h = s.mutable_host();
  h->set_hostname("gpu-1");
  h->set_cpus(16);
  h->set_mem_total_bytes(128ull << 30);
  h->set_mem_available_bytes(100ull << 30);
  h->set_swap_total_bytes(0);
  h->set_swap_free_bytes(0);
  h->mutable_memory_pressure()->mutable_some()->set_avg10(1.5);
  h->mutable_memory_pressure()->mutable_full()->set_avg10(0.25);
  h->set_cgroup_version(v1::CGROUP_VERSION_V2);
  h->set_container(v1::CONTAINER_KIND_LXC);
  s.set_gpu_source(v1::GPU_SOURCE_NVML);
  v1::Gpu* g = s.add_gpus();
  g->set_index(0);
  g->set_uuid("GPU-c6489789");
  g->set_name("NVIDIA H200");
  g->set_compute_capability("9.0");
  g->set_memory_total_bytes(143771ull << 20);
  g->set_memory_used_bytes(21007ull << 20);
  g->set_utilization_gpu_pct(7);
  g->set_temperature_c(43);
  g->set_power_draw_w(128.5);
  g->add_clock_event_reasons("gpu_idle");
  g->set_row_remap_pending(true);
  g->set_row_remap_failure(false);
  v1::GpuProcess* p = g->add_processes();
  p->set_pid(479);
  p->set_name("python3");
  p->set_used_memory_bytes(20998ull << 20);
  return s;
}

TEST(HealthJson, ContractNames) {
  nlohmann::json j = HealthToJson(SampleSnapshot());
  EXPECT_EQ(j["host"]["cpus"], 16);
  EXPECT_EQ(j["host"]["mem_total_bytes"], 128ull << 30);
  EXPECT_EQ(j["host"]["mem_available_bytes"], 100ull << 30);
  EXPECT_EQ(j["host"]["swap_total_bytes"], 0);
  EXPECT_EQ(j["host"]["swap_free_bytes"], 0);
  EXPECT_DOUBLE_EQ(j["host"]["psi"]["memory"]["some_avg10"].get<double>(), 1.5);
  EXPECT_DOUBLE_EQ(j["host"]["psi"]["memory"]["full_avg10"].get<double>(), 0.25);
  EXPECT_EQ(j["host"]["cgroup_version"], "2");
  EXPECT_EQ(j["host"]["container"], "lxc");
  EXPECT_EQ(j["gpu_source"], "nvml");
  EXPECT_FALSE(j.contains("gpu_error"));
  const auto& g = j["gpus"][0];
  EXPECT_EQ(g["index"], 0);
  EXPECT_EQ(g["uuid"], "GPU-c6489789");
  EXPECT_EQ(g["name"], "NVIDIA H200");
  EXPECT_EQ(g["compute_capability"], "9.0");
  EXPECT_EQ(g["memory_total_bytes"], 143771ull << 20);
  EXPECT_EQ(g["memory_used_bytes"], 21007ull << 20);
  EXPECT_EQ(g["utilization_gpu_pct"], 7);
  EXPECT_EQ(g["temperature_c"], 43);
  EXPECT_DOUBLE_EQ(g["power_draw_w"].get<double>(), 128.5);
  EXPECT_TRUE(g["ecc_uncorrected"].is_null());  // not reported stays null, not 0
  // Fault flags: true/false as read, null where not reported.
  EXPECT_TRUE(g["retired_pages_pending"].is_null());
  EXPECT_EQ(g["row_remap_pending"], true);
  EXPECT_EQ(g["row_remap_failure"], false);
  EXPECT_EQ(g["lost"], false);
  EXPECT_EQ(g["processes"][0]["pid"], 479);
  EXPECT_EQ(g["processes"][0]["used_memory_bytes"], 20998ull << 20);
}

TEST(HealthJson, LostGpuAndUnreportedRemapping) {
  v1::HealthSnapshot s = SampleSnapshot();
  v1::Gpu* lost = s.add_gpus();
  lost->set_index(1);
  lost->set_lost(true);
  lost->set_retired_pages_pending(false);
  nlohmann::json j = HealthToJson(s);
  const auto& g = j["gpus"][1];
  EXPECT_EQ(g["index"], 1);
  EXPECT_EQ(g["lost"], true);
  EXPECT_EQ(g["retired_pages_pending"], false);
  EXPECT_TRUE(g["row_remap_pending"].is_null());
  EXPECT_TRUE(g["row_remap_failure"].is_null());
}

TEST(HealthJson, PsiNullWithoutPressureAndErrorWhenSet) {
  v1::HealthSnapshot s = SampleSnapshot();
  s.mutable_host()->clear_memory_pressure();
  s.clear_gpus();
  s.set_gpu_source(v1::GPU_SOURCE_NONE);
  s.set_gpu_error("Failed to initialize NVML: Driver/library version mismatch");
  nlohmann::json j = HealthToJson(s);
  EXPECT_TRUE(j["host"]["psi"].is_null());
  EXPECT_EQ(j["gpu_source"], "none");
  EXPECT_EQ(j["gpu_error"], "Failed to initialize NVML: Driver/library version mismatch");
  EXPECT_TRUE(j["gpus"].empty());
}

TEST(HealthText, HostLineThenAGpuRow) {
  std::string text = HealthToText(SampleSnapshot());
  std::string first = text.substr(0, text.find('\n'));
  EXPECT_NE(first.find("gpu-1"), std::string::npos);
  EXPECT_NE(first.find("16 cpus"), std::string::npos);
  EXPECT_NE(first.find("in lxc"), std::string::npos);
  EXPECT_NE(text.find("NVIDIA H200"), std::string::npos);
  EXPECT_NE(text.find("20.5 GiB / 140.4 GiB"), std::string::npos) << text;
  EXPECT_NE(text.find("gpu_idle"), std::string::npos);
}

TEST(Table, AlignsColumns) {
  Table t({"A", "LONGER"});
  t.AddRow({"xxxx", "1"});
  EXPECT_EQ(t.Render(), "A     LONGER\nxxxx  1\n");
}

TEST(AgentAddress, ChoosesAndNormalises) {
  EXPECT_EQ(ChooseAgentAddress("", ""), kDefaultAgentAddress);
  EXPECT_EQ(ChooseAgentAddress("", "127.0.0.1:1"), "127.0.0.1:1");
  EXPECT_EQ(ChooseAgentAddress("unix:/a", "127.0.0.1:1"), "unix:/a");
  EXPECT_EQ(*NormalizeAgentAddress("/run/x.sock"), "unix:/run/x.sock");
  EXPECT_EQ(*NormalizeAgentAddress("[::1]:50051"), "[::1]:50051");
  EXPECT_FALSE(NormalizeAgentAddress("unix:rel").ok());
  EXPECT_FALSE(NormalizeAgentAddress("hostonly").ok());
  EXPECT_FALSE(NormalizeAgentAddress("host:port").ok());
}

}  // namespace
}  // namespace gpuctl::client
