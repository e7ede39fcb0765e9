#include "common/utf8.h"

#include <gtest/gtest.h>

#include <nlohmann/json.hpp>
#include <random>

#include "common/json_text.h"

namespace gpuctl {
namespace {

constexpr const char* kFffd = "\xEF\xBF\xBD";

TEST(Utf8Test, GoodTextIsKept) {
  for (std::string_view good : {"", "plain", "°C 😀 ü", "\x7f", "\xf4\x8f\xbf\xbf"}) {
    EXPECT_TRUE(IsValidUtf8(good)) << good;
    EXPECT_EQ(SanitizeUtf8(good), good);
  }
}

TEST(Utf8Test, EachMaximalIllFormedSubpartBecomesOneReplacement) {
  EXPECT_EQ(SanitizeUtf8("\xff"), kFffd);
  EXPECT_EQ(SanitizeUtf8("1.2\xe9 GiB"), std::string("1.2") + kFffd + " GiB");  // Latin-1, as in the issue
  EXPECT_EQ(SanitizeUtf8("a\xe2\x82"), std::string("a") + kFffd);               // cut short: one
  EXPECT_EQ(SanitizeUtf8("\xe2\x82z"), std::string(kFffd) + "z");
  EXPECT_EQ(SanitizeUtf8("\xc0\xaf"), std::string(kFffd) + kFffd);              // overlong
  EXPECT_EQ(SanitizeUtf8("\xed\xa0\x80"), std::string(kFffd) + kFffd + kFffd);  // surrogate
  EXPECT_EQ(SanitizeUtf8("\xf4\x90\x80\x80").size(), 12u);                       // above U+10FFFF
  for (std::string_view bad : {"\xff", "\xc0\xaf", "\xed\xa0\x80", "a\xe2\x82", "\xf8\x88\x80\x80\x80"}) {
    EXPECT_FALSE(IsValidUtf8(bad));
  }
}

// Whatever the bytes, the result is valid and the JSON writer takes it.
TEST(Utf8Test, RandomBytesAlwaysComeOutValidAndDumpable) {
  std::mt19937 random(42);
  for (int round = 0; round < 2000; ++round) {
    std::string bytes(static_cast<size_t>(random() % 64), '\0');
    for (char& c : bytes) c = static_cast<char>(random() % 256);
    std::string clean = SanitizeUtf8(bytes);
    ASSERT_TRUE(IsValidUtf8(clean));
    nlohmann::json back = nlohmann::json::parse(DumpJson(nlohmann::json{{"text", clean}}));
    EXPECT_EQ(back["text"], clean);
  }
}

TEST(JsonTextTest, InvalidBytesNeverThrow) {
  nlohmann::json doc = {{"message", "1.2\xe9 GiB is free"}, {"n", 1}};
  EXPECT_THROW(doc.dump(), nlohmann::json::type_error);  // what used to abort the agent
  std::string text = DumpJson(doc, 2);
  EXPECT_NE(text.find("1.2\xEF\xBF\xBD GiB"), std::string::npos);
  EXPECT_EQ(nlohmann::json::parse(text)["n"], 1);
}

}  // namespace
}  // namespace gpuctl
