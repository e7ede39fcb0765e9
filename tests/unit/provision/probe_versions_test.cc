#include "agents/provision/probe_versions.h"

#include <gtest/gtest.h>

namespace gpuctl::provision {
namespace {

TEST(ParseNvccVersion, ReadsReleaseAndBuild) {
  auto release = ParseNvccVersion(
      "nvcc: NVIDIA (R) Cuda compiler driver\n"
      "Copyright (c) 2005-2025 NVIDIA Corporation\n"
      "Built on Wed_Aug_20_01:58:59_PM_PDT_2025\n"
      "Cuda compilation tools, release 13.0, V13.0.88\n"
      "Build cuda_13.0.r13.0/compiler.36424714_0\n");
  ASSERT_TRUE(release.has_value());
  EXPECT_EQ(release->version, "13.0");
  EXPECT_EQ(release->build, "V13.0.88");
  auto old = ParseNvccVersion("Cuda compilation tools, release 11.8, V11.8.89\n");
  ASSERT_TRUE(old.has_value());
  EXPECT_EQ(old->version, "11.8");
  auto bare = ParseNvccVersion("Cuda compilation tools, release 12.4\n");
  ASSERT_TRUE(bare.has_value());
  EXPECT_EQ(bare->build, "");
}

TEST(ParseNvccVersion, NothingWithoutARelease) {
  EXPECT_FALSE(ParseNvccVersion("").has_value());
  EXPECT_FALSE(ParseNvccVersion("nvcc: command not found\n").has_value());
  EXPECT_FALSE(ParseNvccVersion("Cuda compilation tools, release soon, V1\n").has_value());
}

TEST(ParseUvVersion, TheWordAfterUv) {
  EXPECT_EQ(ParseUvVersion("uv 0.8.17 (10960bc13 2025-09-10)\n").value_or(""), "0.8.17");
  EXPECT_EQ(ParseUvVersion("uv 0.4.0\n").value_or(""), "0.4.0");
  EXPECT_FALSE(ParseUvVersion("uvx: not found\n").has_value());
  EXPECT_FALSE(ParseUvVersion("").has_value());
}

TEST(ParsePythonVersion, TheWordAfterPython) {
  EXPECT_EQ(ParsePythonVersion("Python 3.11.2\n").value_or(""), "3.11.2");
  EXPECT_EQ(ParsePythonVersion("\nPython 3.13.0rc1\n").value_or(""), "3.13.0rc1");
  EXPECT_FALSE(ParsePythonVersion("Python\n").has_value());
  EXPECT_FALSE(ParsePythonVersion("CPython 3.11").has_value());
}

TEST(ParseTorchReport, ReadsTheLastLineAsJson) {
  auto report = ParseTorchReport(
      "/opt/venv/lib/python3.12/site-packages/torch/cuda/__init__.py:61: FutureWarning: something\n"
      "{\"python\": \"3.12.3\", \"torch\": \"2.11.0+cu130\", \"cuda\": \"13.0\"}\n");
  ASSERT_TRUE(report.ok()) << report.status().ToString();
  EXPECT_EQ(report->python_version, "3.12.3");
  EXPECT_EQ(report->torch_version, "2.11.0+cu130");
  EXPECT_EQ(report->torch_cuda, "13.0");
  EXPECT_EQ(report->import_error, "");
}

TEST(ParseTorchReport, CpuBuildAndMissingTorch) {
  auto cpu = ParseTorchReport("{\"python\": \"3.11.2\", \"torch\": \"2.5.1+cpu\", \"cuda\": null}");
  ASSERT_TRUE(cpu.ok());
  EXPECT_EQ(cpu->torch_version, "2.5.1+cpu");
  EXPECT_EQ(cpu->torch_cuda, "");
  auto none = ParseTorchReport("{\"python\": \"3.11.2\", \"error\": \"ModuleNotFoundError: No module named 'torch'\"}");
  ASSERT_TRUE(none.ok());
  EXPECT_EQ(none->torch_version, "");
  EXPECT_NE(none->import_error.find("No module named"), std::string::npos);
}

TEST(ParseTorchReport, RefusesWhatIsNotTheReport) {
  EXPECT_FALSE(ParseTorchReport("").ok());
  EXPECT_FALSE(ParseTorchReport("Traceback (most recent call last):\n  ...\n").ok());
  EXPECT_FALSE(ParseTorchReport("[1, 2]").ok());
  EXPECT_FALSE(ParseTorchReport("{\"torch\": \"2.0\"}").ok());
}

}  // namespace
}  // namespace gpuctl::provision
