#include "common/units.h"

#include <gtest/gtest.h>

#include <cstdint>
#include <string>

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

// A count of bytes goes on as int64 (the proto's uint64 read back by JSON
// consumers, the client's int64): a size past INT64_MAX is refused, never
// wrapped or saturated into a figure the text did not state.
TEST(ParseByteSize, SizesPastInt64MaxAreRefused) {
  EXPECT_FALSE(ParseByteSize("18446744073709551616 GiB").ok());  // 2^64 GiB
  EXPECT_FALSE(ParseByteSize("18446744073709551616 B").ok());    // 2^64
  EXPECT_FALSE(ParseByteSize("18446744073709551615 B").ok());    // UINT64_MAX
  EXPECT_FALSE(ParseByteSize("9223372036854775808 B").ok());     // INT64_MAX + 1
  EXPECT_EQ(*ParseByteSize("9223372036854775807 B"), uint64_t{INT64_MAX});
  EXPECT_EQ(*ParseByteSize("8388607 TiB"), 8388607ull << 40);  // 2^63 - 2^40
  EXPECT_FALSE(ParseByteSize("8388608 TiB").ok());              // 2^63
  EXPECT_FALSE(ParseByteSize("8388608.0 TiB").ok());
  EXPECT_EQ(*ParseByteSize("8388607.5 TiB"), (8388607ull << 40) + (1ull << 39));
  EXPECT_FALSE(ParseByteSize("9223372036854775.808 KB").ok());  // 2^63 with a fraction
  EXPECT_FALSE(ParseByteSize("9223372036854775807 KB").ok());   // in range, times 1000 is not
  EXPECT_FALSE(ParseByteSize(std::string(400, '9') + " B").ok());
  Result<uint64_t> big = ParseByteSize("8388608 TiB");
  EXPECT_EQ(big.status().code(), ErrorCode::kInvalidArgument);
  EXPECT_NE(big.status().message().find("8388608 TiB"), std::string::npos) << big.status().message();
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
