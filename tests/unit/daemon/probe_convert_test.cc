#include "daemon/service/probe_convert.h"

#include <gtest/gtest.h>

namespace gpuctl::daemon {
namespace {

TEST(DriverReportFrom, TakesTheLibraryVersionAndEachGpusCapabilityByNormalisedAddress) {
  sys::GpuReport report;
  sys::GpuDevice a;
  a.pci_bus_id = "00000000:17:00.0";
  a.compute_capability = "9.0";
  a.driver_version = "580.159.04";
  sys::GpuDevice b;
  b.pci_bus_id = "00000000:2A:00.0";
  b.compute_capability = "";  // not reported: left to the chip table
  report.devices = {a, b};
  provision::DriverReport driver = DriverReportFrom(report);
  EXPECT_EQ(driver.library_version, "580.159.04");
  ASSERT_EQ(driver.compute_capability_by_pci.size(), 1u);
  EXPECT_EQ(driver.compute_capability_by_pci.at("0000:17:00.0"), "9.0");
  EXPECT_TRUE(DriverReportFrom(sys::GpuReport{}).library_version.empty());
}

TEST(ProbeToProto, CarriesTheModuleFlavorAndOmitsAnAbsentModule) {
  provision::HostProbe probe;
  probe.os_id = "ubuntu";
  probe.gpu_archs = {"90"};
  probe.notes = {"uv not found"};
  v1::HostProbe out;
  ToProto(probe, out);
  EXPECT_FALSE(out.has_driver_module());
  EXPECT_EQ(out.os_id(), "ubuntu");
  ASSERT_EQ(out.gpu_archs_size(), 1);
  EXPECT_EQ(out.notes(0), "uv not found");
  probe.driver_module = provision::NvidiaKernelModule{.version = "550.54.14", .open = false};
  ToProto(probe, out);
  ASSERT_TRUE(out.has_driver_module());
  EXPECT_EQ(out.driver_module().flavor(), "proprietary");
  EXPECT_EQ(out.driver_module().version(), "550.54.14");
}

}  // namespace
}  // namespace gpuctl::daemon
