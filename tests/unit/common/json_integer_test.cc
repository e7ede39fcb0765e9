#include "common/json_integer.h"

#include <gtest/gtest.h>

namespace gpuctl {
namespace {

using nlohmann::json;

TEST(JsonInteger, TakesIntegersItsTypeHolds) {
  EXPECT_EQ(JsonInteger<int64_t>(json::parse("-9223372036854775808")), INT64_MIN);
  EXPECT_EQ(JsonInteger<uint64_t>(json::parse("18446744073709551615")), UINT64_MAX);
  EXPECT_EQ(JsonInteger<int>(json::parse("65535")), 65535);
  EXPECT_EQ(JsonInteger<uint32_t>(json::parse("0")), 0u);
}

// nlohmann's get<T>() converts 1e300 to an integer (undefined behaviour) and
// wraps -1 into an unsigned type; these are malformed values instead.
TEST(JsonInteger, RefusesFractionsOutOfRangeAndOtherTypes) {
  for (const char* text : {"1e300", "1.5", "-1", "4294967296", "\"7\"", "null", "true", "[1]"}) {
    EXPECT_THROW(JsonInteger<uint32_t>(json::parse(text)), json::type_error) << text;
  }
  EXPECT_THROW(JsonInteger<int64_t>(json::parse("9223372036854775808")), json::type_error);
  try {
    JsonInteger<int>(json::parse("1e300"));
    FAIL();
  } catch (const json::type_error& e) {
    EXPECT_NE(std::string(e.what()).find("got 1e+300"), std::string::npos) << e.what();
  }
}

TEST(JsonIntegerOr, FallbackOnlyWhenAbsent) {
  json j = json::parse(R"({"a": 3, "b": 2.5})");
  EXPECT_EQ(JsonIntegerOr(j, "a", 0), 3);
  EXPECT_EQ(JsonIntegerOr(j, "missing", 7), 7);
  EXPECT_THROW(JsonIntegerOr(j, "b", 0), json::type_error);
  EXPECT_THROW(JsonIntegerOr(json::array(), "a", 0), json::type_error);
}

}  // namespace
}  // namespace gpuctl
