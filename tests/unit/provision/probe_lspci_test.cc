#include "agents/provision/probe_lspci.h"

#include <gtest/gtest.h>

namespace gpuctl::provision {
namespace {

TEST(ParseLspciLine, ReadsA3dControllerWithBracketsInItsName) {
  auto device = ParseLspciLine(
      "0000:17:00.0 3D controller [0302]: NVIDIA Corporation GH100 [H200 SXM 141GB] [10de:2335] (rev a1)");
  ASSERT_TRUE(device.has_value());
  EXPECT_EQ(device->address, "0000:17:00.0");
  EXPECT_EQ(device->class_name, "3D controller");
  EXPECT_EQ(device->class_code, "0302");
  EXPECT_EQ(device->name, "NVIDIA Corporation GH100 [H200 SXM 141GB]");
  EXPECT_EQ(device->vendor_id, "10de");
  EXPECT_EQ(device->device_id, "2335");
  EXPECT_EQ(device->revision, "a1");
}

TEST(ParseLspciLine, ReadsAVgaControllerWithProgIfAndNoDomain) {
  auto device = ParseLspciLine(
      "01:00.0 VGA compatible controller [0300]: NVIDIA Corporation GA102 [GeForce RTX 3080] [10DE:2206] (rev a1) "
      "(prog-if 00 [VGA controller])");
  ASSERT_TRUE(device.has_value());
  EXPECT_EQ(device->address, "0000:01:00.0");
  EXPECT_EQ(device->class_code, "0300");
  EXPECT_EQ(device->name, "NVIDIA Corporation GA102 [GeForce RTX 3080]");
  EXPECT_EQ(device->vendor_id, "10de");
  EXPECT_EQ(device->device_id, "2206");
  EXPECT_EQ(device->revision, "a1");
}

TEST(ParseLspciLine, ReadsALineWithoutRevisionOrResolvedName) {
  auto device = ParseLspciLine("0000:c1:00.0 3D controller [0302]: NVIDIA Corporation Device [10de:2901]");
  ASSERT_TRUE(device.has_value());
  EXPECT_EQ(device->name, "NVIDIA Corporation Device");
  EXPECT_EQ(device->device_id, "2901");
  EXPECT_EQ(device->revision, "");
}

TEST(ParseLspciLine, RefusesLinesOutsideTheGrammar) {
  for (const char* line : {"", "garbage", "0000:17:00.0 3D controller: NVIDIA [10de:2335]",
                           "0000:17:00.0 3D controller [0302]: NVIDIA Corporation GH100 (rev a1)",
                           "0000:17:00.0 3D controller [03x2]: NVIDIA [10de:2335]",
                           "0000:17:00.0 3D controller [0302]: NVIDIA [10de:23]",
                           "17.00.0 3D controller [0302]: NVIDIA [10de:2335]"}) {
    EXPECT_FALSE(ParseLspciLine(line).has_value()) << line;
  }
}

TEST(ParseLspciNvidiaGpus, KeepsNvidiaDisplayDevicesOnly) {
  auto gpus = ParseLspciNvidiaGpus(
      "0000:00:00.0 Host bridge [0600]: Intel Corporation 440FX - 82441FX PMC [Natoma] [8086:1237] (rev 02)\n"
      "0000:03:00.0 VGA compatible controller [0300]: ASPEED Technology, Inc. ASPEED Graphics Family [1a03:2000] (rev 52)\n"
      "0000:05:00.0 Bridge [0680]: NVIDIA Corporation GH100 [H100 NVSwitch] [10de:22a3] (rev a1)\n"
      "0000:17:00.0 3D controller [0302]: NVIDIA Corporation GH100 [H200 SXM 141GB] [10de:2335] (rev a1)\n"
      "0000:2a:00.0 VGA compatible controller [0300]: NVIDIA Corporation AD102 [GeForce RTX 4090] [10de:2684] (rev a1)\n"
      "0000:2a:00.1 Audio device [0403]: NVIDIA Corporation AD102 High Definition Audio Controller [10de:22ba] (rev a1)\n"
      "not a line\n");
  ASSERT_EQ(gpus.size(), 2u);
  EXPECT_EQ(gpus[0].address, "0000:17:00.0");
  EXPECT_EQ(gpus[1].address, "0000:2a:00.0");
  EXPECT_EQ(gpus[1].device_id, "2684");
  EXPECT_TRUE(ParseLspciNvidiaGpus("").empty());
}

}  // namespace
}  // namespace gpuctl::provision
