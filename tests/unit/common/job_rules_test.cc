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
