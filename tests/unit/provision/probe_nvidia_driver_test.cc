#include "agents/provision/probe_nvidia_driver.h"

#include <gtest/gtest.h>

namespace gpuctl::provision {
namespace {

TEST(ParseNvidiaKernelModule, ReadsTheOpenModule) {
  auto module = ParseNvidiaKernelModule(
      "NVRM version: NVIDIA UNIX Open Kernel Module for x86_64  580.159.04  Release Build  "
      "(dvs-builder@U22-I3-AF03-09-1)  Thu Nov 13 19:24:51 UTC 2025\n"
      "GCC version:  gcc version 12.3.0 (Ubuntu 12.3.0-1ubuntu1~22.04.2)\n");
  ASSERT_TRUE(module.has_value());
  EXPECT_EQ(module->version, "580.159.04");
  EXPECT_TRUE(module->open);
}

TEST(ParseNvidiaKernelModule, ReadsTheProprietaryModule) {
  auto module = ParseNvidiaKernelModule(
      "NVRM version: NVIDIA UNIX x86_64 Kernel Module  550.54.14  Thu Feb 22 01:44:30 UTC 2024\n"
      "GCC version:  gcc version 12.2.0 (Debian 12.2.0-14)\n");
  ASSERT_TRUE(module.has_value());
  EXPECT_EQ(module->version, "550.54.14");
  EXPECT_FALSE(module->open);
}

TEST(ParseNvidiaKernelModule, ReadsOtherLayoutsByTheFirstDottedNumber) {
  // Two-part versions, other architectures, the word order of some 590 builds.
  auto a = ParseNvidiaKernelModule("NVRM version: NVIDIA UNIX Open Kernel Module for aarch64  555.58  Release Build\n");
  ASSERT_TRUE(a.has_value());
  EXPECT_EQ(a->version, "555.58");
  EXPECT_TRUE(a->open);
  auto b = ParseNvidiaKernelModule("NVRM version: NVIDIA UNIX Open Kernel x86_64 Kernel Module  590.48.01  Mon Dec  8\n");
  ASSERT_TRUE(b.has_value());
  EXPECT_EQ(b->version, "590.48.01");
  EXPECT_TRUE(b->open);
}

TEST(ParseNvidiaKernelModule, NothingWithoutTheNvrmLineOrAVersion) {
  EXPECT_FALSE(ParseNvidiaKernelModule("").has_value());
  EXPECT_FALSE(ParseNvidiaKernelModule("GCC version:  gcc version 12.2.0\n").has_value());
  EXPECT_FALSE(ParseNvidiaKernelModule("NVRM version: NVIDIA UNIX Kernel Module\nGCC version: 12.2.0\n").has_value());
}

TEST(NvmlLibraryVersionFromFileName, TakesTheVersionedNameOnly) {
  EXPECT_EQ(NvmlLibraryVersionFromFileName("libnvidia-ml.so.580.159.04").value_or(""), "580.159.04");
  EXPECT_FALSE(NvmlLibraryVersionFromFileName("libnvidia-ml.so.1").has_value());
  EXPECT_FALSE(NvmlLibraryVersionFromFileName("libnvidia-ml.so").has_value());
  EXPECT_FALSE(NvmlLibraryVersionFromFileName("libcuda.so.580.159.04").has_value());
}

TEST(ParseNvidiaSmiDriverVersion, FirstLineOrNothingForAnError) {
  EXPECT_EQ(ParseNvidiaSmiDriverVersion("580.159.04\n580.159.04\n").value_or(""), "580.159.04");
  EXPECT_EQ(ParseNvidiaSmiDriverVersion("\n 575.57.08 \n").value_or(""), "575.57.08");
  EXPECT_FALSE(ParseNvidiaSmiDriverVersion("Failed to initialize NVML: Driver/library version mismatch\n").has_value());
  EXPECT_FALSE(ParseNvidiaSmiDriverVersion("").has_value());
}

TEST(ParseModuleVersionFile, ADottedNumber) {
  EXPECT_EQ(ParseModuleVersionFile("580.159.04\n").value_or(""), "580.159.04");
  EXPECT_FALSE(ParseModuleVersionFile("580\n").has_value());
  EXPECT_FALSE(ParseModuleVersionFile("580..1").has_value());
}

}  // namespace
}  // namespace gpuctl::provision
