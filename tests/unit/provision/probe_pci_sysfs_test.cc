// GPUs from a fixture tree of /sys/bus/pci/devices, for hosts without lspci.
#include "agents/provision/probe_pci_sysfs.h"

#include <gtest/gtest.h>

#include "tests/fakes/temp_dir.h"

namespace gpuctl::provision {
namespace {

void AddDevice(const testing::TempDir& root, const std::string& address, const std::string& vendor,
               const std::string& device, const std::string& class_code, const std::string& revision) {
  const std::string dir = "sys/bus/pci/devices/" + address + "/";
  root.WriteFile(dir + "vendor", vendor + "\n");
  root.WriteFile(dir + "device", device + "\n");
  root.WriteFile(dir + "class", class_code + "\n");
  if (!revision.empty()) root.WriteFile(dir + "revision", revision + "\n");
}

TEST(ReadSysfsNvidiaGpus, KeepsNvidiaDisplayFunctionsOnly) {
  testing::TempDir root;
  AddDevice(root, "0000:17:00.0", "0x10de", "0x2335", "0x030200", "0xa1");  // H200, 3D controller
  AddDevice(root, "0000:17:00.1", "0x10de", "0x22e8", "0x040300", "0xa1");  // its HDMI audio
  AddDevice(root, "0000:03:00.0", "0x10DE", "0x2B85", "0x030000", "");      // VGA, upper-case hex
  AddDevice(root, "0000:00:02.0", "0x8086", "0x46a6", "0x030000", "0x0c");  // an Intel iGPU
  AddDevice(root, "0000:05:00.0", "0x10de", "0x22a3", "0x068000", "0xa1");  // an NVSwitch bridge
  AddDevice(root, "0000:06:00.0", "0x10de", "garbage", "0x030200", "");     // unreadable: skipped

  std::vector<PciDevice> gpus = ReadSysfsNvidiaGpus(sys::HostFs(root.path()));
  ASSERT_EQ(gpus.size(), 2u);
  // Sorted by address, as the directory listing is.
  EXPECT_EQ(gpus[0].address, "0000:03:00.0");
  EXPECT_EQ(gpus[0].class_code, "0300");
  EXPECT_EQ(gpus[0].vendor_id, "10de");
  EXPECT_EQ(gpus[0].device_id, "2b85");
  EXPECT_EQ(gpus[0].revision, "");
  EXPECT_EQ(gpus[1].address, "0000:17:00.0");
  EXPECT_EQ(gpus[1].class_code, "0302");
  EXPECT_EQ(gpus[1].device_id, "2335");
  EXPECT_EQ(gpus[1].revision, "a1");
  EXPECT_EQ(gpus[1].name, "");
}

TEST(ReadSysfsNvidiaGpus, NoPciBusIsNoGpus) {
  testing::TempDir root;  // an LXC guest often has no /sys/bus/pci
  EXPECT_TRUE(ReadSysfsNvidiaGpus(sys::HostFs(root.path())).empty());
}

}  // namespace
}  // namespace gpuctl::provision
