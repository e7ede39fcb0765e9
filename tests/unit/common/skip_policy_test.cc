// The test suite's own rule for skips (tests/fakes/skip_policy.h): outside
// CI a missing tool skips; under CI=true it fails, unless its reason is one
// no install script can provide.
#include "tests/fakes/skip_policy.h"

#include <gtest/gtest-spi.h>
#include <gtest/gtest.h>

#include <optional>
#include <string>
#include <vector>

#include "tests/fakes/scoped_env.h"

namespace gpuctl::testing {
namespace {

void SkipForWantOfTmux() { GPUCTL_SKIP() << "tmux is not installed"; }
void SkipForSwap() { GPUCTL_SKIP_ALLOWED(kPlatform) << "swap is on"; }

// What `skip` reported, with CI set to `ci` (nullopt: unset).
std::vector<::testing::TestPartResult> Outcome(void (*skip)(), const std::optional<std::string>& ci) {
  ScopedEnv env("CI", ci);
  ::testing::TestPartResultArray results;
  {
    ::testing::ScopedFakeTestPartResultReporter reporter(
        ::testing::ScopedFakeTestPartResultReporter::INTERCEPT_ONLY_CURRENT_THREAD, &results);
    skip();
  }
  std::vector<::testing::TestPartResult> said;
  for (int i = 0; i < results.size(); ++i) said.push_back(results.GetTestPartResult(i));
  return said;
}

TEST(SkipPolicy, AMissingToolSkipsOutsideCi) {
  for (const std::optional<std::string>& ci : {std::optional<std::string>(), std::optional<std::string>("false")}) {
    std::vector<::testing::TestPartResult> results = Outcome(SkipForWantOfTmux, ci);
    ASSERT_EQ(results.size(), 1u);
    EXPECT_TRUE(results[0].skipped());
    EXPECT_STREQ(results[0].message(), "tmux is not installed");
  }
}

TEST(SkipPolicy, AMissingToolFailsUnderCi) {
  std::vector<::testing::TestPartResult> results = Outcome(SkipForWantOfTmux, "true");
  ASSERT_EQ(results.size(), 1u);
  EXPECT_TRUE(results[0].fatally_failed());
  const std::string message = results[0].message();
  EXPECT_NE(message.find("CI=true"), std::string::npos) << message;
  EXPECT_NE(message.find("tmux is not installed"), std::string::npos) << message;
}

TEST(SkipPolicy, AnAllowedReasonSkipsUnderCiTooAndSaysWhichKind) {
  std::vector<::testing::TestPartResult> results = Outcome(SkipForSwap, "true");
  ASSERT_EQ(results.size(), 1u);
  EXPECT_TRUE(results[0].skipped());
  EXPECT_STREQ(results[0].message(), "[allowed: platform] swap is on");
}

}  // namespace
}  // namespace gpuctl::testing
