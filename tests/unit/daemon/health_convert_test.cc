#include "daemon/service/health_convert.h"

#include <gtest/gtest.h>

namespace gpuctl::daemon {
namespace {

// The memory-repair flags cross the wire as set, false or unknown (unset,
// never false); lost always.
TEST(HealthToProto, CarriesTheGpuFaultFlags) {
  health::HealthSnapshot in;
  sys::GpuDevice remapping;
  remapping.index = 0;
  remapping.uuid = "GPU-a";
  remapping.row_remap_pending = true;
  remapping.row_remap_failure = false;
  sys::GpuDevice retiring;
  retiring.index = 1;
  retiring.retired_pages_pending = true;
  sys::GpuDevice lost;
  lost.index = 2;
  lost.lost = true;
  in.gpus.devices = {remapping, retiring, lost};

  v1::HealthSnapshot out;
  ToProto(in, out);
  ASSERT_EQ(out.gpus_size(), 3);

  const v1::Gpu& a = out.gpus(0);
  EXPECT_FALSE(a.has_retired_pages_pending());
  ASSERT_TRUE(a.has_row_remap_pending());
  EXPECT_TRUE(a.row_remap_pending());
  ASSERT_TRUE(a.has_row_remap_failure());
  EXPECT_FALSE(a.row_remap_failure());
  EXPECT_FALSE(a.lost());

  const v1::Gpu& b = out.gpus(1);
  ASSERT_TRUE(b.has_retired_pages_pending());
  EXPECT_TRUE(b.retired_pages_pending());
  EXPECT_FALSE(b.has_row_remap_pending());
  EXPECT_FALSE(b.has_row_remap_failure());

  const v1::Gpu& c = out.gpus(2);
  EXPECT_EQ(c.index(), 2u);
  EXPECT_TRUE(c.lost());
  EXPECT_FALSE(c.has_retired_pages_pending());
}

}  // namespace
}  // namespace gpuctl::daemon
