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

// Before Turing too: the proprietary modules are the only ones that drive them.
TEST(ComputeCapabilityFromPciName, MapsTheGenerationsBeforeTuring) {
  EXPECT_EQ(ComputeCapabilityFromPciName("NVIDIA Corporation GV100GL [Tesla V100 PCIe 16GB]"), "7.0");
  EXPECT_EQ(ComputeCapabilityFromPciName("NVIDIA Corporation GP100GL [Tesla P100 PCIe 16GB]"), "6.0");
  EXPECT_EQ(ComputeCapabilityFromPciName("NVIDIA Corporation GP102GL [Tesla P40]"), "6.1");
  EXPECT_EQ(ComputeCapabilityFromPciName("NVIDIA Corporation GP104GL [Tesla P4]"), "6.1");
  EXPECT_EQ(ComputeCapabilityFromPciName("NVIDIA Corporation GM204GL [Tesla M60]"), "5.2");
  EXPECT_EQ(ComputeCapabilityFromPciName("NVIDIA Corporation GM200GL [Tesla M40]"), "5.2");
  EXPECT_EQ(ComputeCapabilityFromPciName("NVIDIA Corporation GM107GL [Tesla M10]"), "5.0");
  EXPECT_EQ(ComputeCapabilityFromPciName("NVIDIA Corporation GK210GL [Tesla K80]"), "3.7");
  EXPECT_EQ(ComputeCapabilityFromPciName("NVIDIA Corporation GK110BGL [Tesla K40m]"), "3.5");
  EXPECT_EQ(ComputeCapabilityFromPciName("NVIDIA Corporation GK208B [GeForce GT 730]"), "3.5");
  EXPECT_EQ(ComputeCapabilityFromPciName("NVIDIA Corporation GK104GL [Tesla K10]"), "3.0");
}

// A name lspci could not resolve ("Device 2335"): the device id's block.
TEST(ComputeCapabilityFromPciDeviceId, MapsEachChipsBlock) {
  EXPECT_EQ(ComputeCapabilityFromPciDeviceId("2335"), "9.0");  // H200
  EXPECT_EQ(ComputeCapabilityFromPciDeviceId("2330"), "9.0");  // H100 SXM
  EXPECT_EQ(ComputeCapabilityFromPciDeviceId("20b2"), "8.0");  // A100 80GB
  EXPECT_EQ(ComputeCapabilityFromPciDeviceId("2236"), "8.6");  // A10
  EXPECT_EQ(ComputeCapabilityFromPciDeviceId("26B9"), "8.9");  // L40S, upper case
  EXPECT_EQ(ComputeCapabilityFromPciDeviceId("2901"), "10.0"); // B200
  EXPECT_EQ(ComputeCapabilityFromPciDeviceId("2bb1"), "12.0"); // RTX PRO 6000
  EXPECT_EQ(ComputeCapabilityFromPciDeviceId("1eb8"), "7.5");  // T4
  EXPECT_EQ(ComputeCapabilityFromPciDeviceId("1db4"), "7.0");  // V100 PCIe
  EXPECT_EQ(ComputeCapabilityFromPciDeviceId("15f8"), "6.0");  // P100 PCIe 16GB
  EXPECT_EQ(ComputeCapabilityFromPciDeviceId("1b38"), "6.1");  // P40
  EXPECT_EQ(ComputeCapabilityFromPciDeviceId("13f2"), "5.2");  // M60
  EXPECT_EQ(ComputeCapabilityFromPciDeviceId("17fd"), "5.2");  // M40
  EXPECT_EQ(ComputeCapabilityFromPciDeviceId("13bd"), "5.0");  // M10
  EXPECT_EQ(ComputeCapabilityFromPciDeviceId("102d"), "3.7");  // K80, inside GK110's block
  EXPECT_EQ(ComputeCapabilityFromPciDeviceId("1023"), "3.5");  // K40m
  EXPECT_EQ(ComputeCapabilityFromPciDeviceId("118f"), "3.0");  // K10
  for (const char* unknown : {"3000", "0000", "1500", "", "12345", "zz99", "2350"}) {
    EXPECT_EQ(ComputeCapabilityFromPciDeviceId(unknown), "") << unknown;
  }
}

TEST(ComputeCapabilityFromPciName, EmptyForUnknownOrUnresolvedNames) {
  EXPECT_EQ(ComputeCapabilityFromPciName("NVIDIA Corporation Device"), "");
  EXPECT_EQ(ComputeCapabilityFromPciName(""), "");
  EXPECT_EQ(ComputeCapabilityFromPciName("NVIDIA Corporation GR100 [a chip after this table]"), "");
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
