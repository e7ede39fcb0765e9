#include "common/units.h"

#include <gtest/gtest.h>

namespace gpuctl {
namespace {

TEST(ParseDuration, AcceptsUnitsAndSums) {
  EXPECT_EQ(ParseDuration("500ms")->count(), 500);
  EXPECT_EQ(ParseDuration("2s")->count(), 2000);
  EXPECT_EQ(ParseDuration("1m30s")->count(), 90'000);
  EXPECT_EQ(ParseDuration("0.25s")->count(), 250);
  EXPECT_EQ(ParseDuration("3")->count(), 3000);
  EXPECT_EQ(ParseDuration("1h")->count(), 3'600'000);
}

TEST(ParseDuration, RefusesGarbageWithAHint) {
  for (const char* bad : {"", "fast", "-1s", "2x", "1s-", "3 5"}) {
    auto r = ParseDuration(bad);
    ASSERT_FALSE(r.ok()) << bad;
    EXPECT_EQ(r.status().code(), ErrorCode::kInvalidArgument);
    EXPECT_NE(r.status().message().find("e.g."), std::string::npos);
  }
}

TEST(ParseByteSize, PyTorchAndNvidiaSmiForms) {
  EXPECT_EQ(*ParseByteSize("16.00 GiB"), 16ull << 30);
  EXPECT_EQ(*ParseByteSize("8.00 MiB"), 8ull << 20);
  EXPECT_EQ(*ParseByteSize("0 bytes"), 0u);
  EXPECT_EQ(*ParseByteSize("139.80 GiB"), static_cast<uint64_t>(139.80 * 1073741824.0 + 0.5));
  EXPECT_EQ(*ParseByteSize("4G"), 4ull << 30);
  EXPECT_EQ(*ParseByteSize("1 KB"), 1000u);
  EXPECT_EQ(*ParseByteSize("20998 MiB"), 20998ull << 20);
  EXPECT_FALSE(ParseByteSize("lots").ok());
  EXPECT_FALSE(ParseByteSize("12 parsecs").ok());
}

TEST(FormatBytes, PicksAReadableUnit) {
  EXPECT_EQ(FormatBytes(0), "0 B");
  EXPECT_EQ(FormatBytes(1536), "1.5 KiB");
  EXPECT_EQ(FormatBytes(16ull << 30), "16.0 GiB");
}

TEST(Status, CarriesWhereAndWraps) {
  Status s = NotFound("no such job 'x'");
  EXPECT_FALSE(s.ok());
  EXPECT_NE(s.where().find("units_test.cc:"), std::string::npos);
  EXPECT_EQ(s.Wrap("train status").message(), "train status: no such job 'x'");
  EXPECT_TRUE(Status::Ok().ok());
}

}  // namespace
}  // namespace gpuctl
