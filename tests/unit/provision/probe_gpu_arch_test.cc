#include "agents/provision/probe_gpu_arch.h"

#include <gtest/gtest.h>

namespace gpuctl::provision {
namespace {

TEST(ComputeCapabilityFromPciName, MapsChipFamilies) {
  EXPECT_EQ(ComputeCapabilityFromPciName("NVIDIA Corporation GH100 [H200 SXM 141GB]"), "9.0");
  EXPECT_EQ(ComputeCapabilityFromPciName("GH100 [H100 PCIe]"), "9.0");
  EXPECT_EQ(ComputeCapabilityFromPciName("NVIDIA Corporation GA100 [A100 SXM4 80GB]"), "8.0");
  EXPECT_EQ(ComputeCapabilityFromPciName("NVIDIA Corporation GA102 [GeForce RTX 3080]"), "8.6");
  EXPECT_EQ(ComputeCapabilityFromPciName("NVIDIA Corporation AD102 [GeForce RTX 4090]"), "8.9");
  EXPECT_EQ(ComputeCapabilityFromPciName("NVIDIA Corporation GB100 [B200]"), "10.0");
  EXPECT_EQ(ComputeCapabilityFromPciName("NVIDIA Corporation GB202 [GeForce RTX 5090]"), "12.0");
  EXPECT_EQ(ComputeCapabilityFromPciName("NVIDIA Corporation TU104GL [Tesla T4]"), "7.5");
}

TEST(ComputeCapabilityFromPciName, EmptyForUnknownOrUnresolvedNames) {
  EXPECT_EQ(ComputeCapabilityFromPciName("NVIDIA Corporation Device"), "");
  EXPECT_EQ(ComputeCapabilityFromPciName(""), "");
  EXPECT_EQ(ComputeCapabilityFromPciName("NVIDIA Corporation GK110B [Tesla K40]"), "");
}

TEST(NormalizePciAddress, OneSpellingForLspciAndNvml) {
  EXPECT_EQ(NormalizePciAddress("00000000:17:00.0"), "0000:17:00.0");
  EXPECT_EQ(NormalizePciAddress("0000:17:00.0"), "0000:17:00.0");
  EXPECT_EQ(NormalizePciAddress("00000000:2A:00.0"), "0000:2a:00.0");
  EXPECT_EQ(NormalizePciAddress("17:00.0"), "0000:17:00.0");
  EXPECT_EQ(NormalizePciAddress("10000:01:00.0"), "10000:01:00.0");
}

}  // namespace
}  // namespace gpuctl::provision
