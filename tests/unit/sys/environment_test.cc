// The agent's whole environment, as jobs start from it (job_environment.h).
#include "agents/sys/environment.h"

#include <gtest/gtest.h>

#include <cstdlib>

namespace gpuctl::sys {
namespace {

TEST(ProcessEnvironment, HoldsEveryVariableWithItsValue) {
  ASSERT_EQ(::setenv("GPUCTL_ENV_TEST", "a=b c", 1), 0);
  std::map<std::string, std::string> env = ProcessEnvironment();
  ::unsetenv("GPUCTL_ENV_TEST");
  ASSERT_TRUE(env.contains("GPUCTL_ENV_TEST"));
  EXPECT_EQ(env.at("GPUCTL_ENV_TEST"), "a=b c") << "split at the first '=' only";
  EXPECT_EQ(env.contains("PATH"), EnvironmentVariable("PATH").has_value());
  EXPECT_FALSE(ProcessEnvironment().contains("GPUCTL_ENV_TEST"));
}

}  // namespace
}  // namespace gpuctl::sys
