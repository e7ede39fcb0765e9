#include "common/job_rules.h"

#include <gtest/gtest.h>

namespace gpuctl {
namespace {

TEST(IsEnvKey, LettersDigitsUnderscoreNotLeadingDigit) {
  EXPECT_TRUE(IsEnvKey("WANDB_MODE"));
  EXPECT_TRUE(IsEnvKey("_private"));
  EXPECT_TRUE(IsEnvKey("a1"));
  EXPECT_FALSE(IsEnvKey(""));
  EXPECT_FALSE(IsEnvKey("1A"));
  EXPECT_FALSE(IsEnvKey("A-B"));
  EXPECT_FALSE(IsEnvKey("A B"));
  EXPECT_FALSE(IsEnvKey("A=B"));
  EXPECT_FALSE(IsEnvKey("Ä"));
}

}  // namespace
}  // namespace gpuctl

namespace gpuctl {
namespace {

TEST(ParseWholeNumber, DigitsWithinUint64Only) {
  EXPECT_EQ(ParseWholeNumber("0"), 0u);
  EXPECT_EQ(ParseWholeNumber("1024"), 1024u);
  EXPECT_EQ(ParseWholeNumber("18446744073709551615"), 18446744073709551615ull);
  for (const char* bad : {"", "-5", "+3", "1.5", "1e3", " 1", "1 ", "0x10", "18446744073709551616"}) {
    EXPECT_FALSE(ParseWholeNumber(bad).has_value()) << bad;
  }
}

TEST(ParseAnchors, SaysWhyItRefuses) {
  EXPECT_EQ(*ParseAnchors("768"), 768u);
  EXPECT_EQ(ParseAnchors("0").status().message(), "invalid anchor count '0': it must be above 0 (e.g. 1024)");
  EXPECT_EQ(ParseAnchors("1k").status().message(),
            "invalid anchor count '1k': give a whole number above 0, in digits only (e.g. 1024)");
  EXPECT_EQ(ParseAnchors("99999999999999999999").status().message(),
            "invalid anchor count '99999999999999999999': it is too large (e.g. 1024)");
}

TEST(TrainStartFlagRules, EachFlagItsRangeAndMessage) {
  EXPECT_EQ(*ParseAnchorsFlag("1024"), 1024u);
  EXPECT_EQ(ParseAnchorsFlag("0").status().message(),
            "--anchors must be a positive integer (e.g. --anchors 1024), got '0'");

  EXPECT_EQ(*ParseOomRetriesFlag("0"), 0u);
  EXPECT_EQ(*ParseOomRetriesFlag("100"), 100u);
  EXPECT_EQ(ParseOomRetriesFlag("101").status().message(),
            "--oom-retries must be a whole number from 0 to 100, got '101'");
  EXPECT_FALSE(ParseOomRetriesFlag("-1").ok());

  EXPECT_EQ(*ParseNumGpusFlag("8"), 8u);
  EXPECT_EQ(*ParseNumGpusFlag("1024"), 1024u);
  EXPECT_EQ(ParseNumGpusFlag("0").status().message(), "--num-gpus must be a whole number from 1 to 1024, got '0'");
  EXPECT_FALSE(ParseNumGpusFlag("1025").ok());

  EXPECT_EQ(*ParsePriorityFlag("-1000"), -1000);
  EXPECT_EQ(*ParsePriorityFlag("1000"), 1000);
  EXPECT_EQ(*ParsePriorityFlag("0"), 0);
  EXPECT_EQ(*ParsePriorityFlag("+5"), 5);
  EXPECT_EQ(ParsePriorityFlag("1001").status().message(),
            "--priority must be a whole number from -1000 to 1000, got '1001'");
  for (const char* bad : {"", "-", "+", "+-1", "1.5", "high", "-99999999999999999999"}) {
    EXPECT_FALSE(ParsePriorityFlag(bad).ok()) << bad;
  }
}

TEST(TypedJobRules, LimitsOnWhatTheWireCarries) {
  EXPECT_TRUE(CheckOomRetries(kDefaultOomRetries).ok());
  EXPECT_TRUE(CheckOomRetries(100).ok());
  EXPECT_EQ(CheckOomRetries(101).message(), "--oom-retries must be at most 100");
  EXPECT_TRUE(CheckNumGpus(0).ok());
  EXPECT_EQ(CheckNumGpus(1025).message(), "--num-gpus must be at most 1024");
  EXPECT_EQ(kDefaultOomRetries, 3u);
  EXPECT_EQ(kDefaultAnchorsFlag, "--max-anchors");
  EXPECT_EQ(kDefaultOomKnobFactor, 0.75);
  EXPECT_EQ(kDefaultOomKnobMin, 64u);
}

}  // namespace
}  // namespace gpuctl

namespace gpuctl {
namespace {

TEST(ParseOnOom, FailRecoverOrRefused) {
  EXPECT_EQ(*ParseOnOom(""), OnOom::kFail);
  EXPECT_EQ(*ParseOnOom("fail"), OnOom::kFail);
  EXPECT_EQ(*ParseOnOom("recover"), OnOom::kRecover);
  EXPECT_EQ(ParseOnOom("Recover").status().message(), "--on-oom must be fail or recover, got 'Recover'");
  EXPECT_STREQ(OnOomName(OnOom::kRecover), "recover");
  EXPECT_STREQ(OnOomName(OnOom::kFail), "fail");
}

}  // namespace
}  // namespace gpuctl
