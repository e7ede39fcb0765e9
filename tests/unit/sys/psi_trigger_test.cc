// The trigger text and its validation, and Open/Wait against a fixture file
// (a regular file never reports POLLPRI, so Wait times out). The real
// /proc/pressure/memory is exercised in tests/privileged.
#include "agents/sys/psi_trigger.h"

#include <gtest/gtest.h>

#include "agents/sys/cgroup_io.h"
#include "tests/fakes/temp_dir.h"

namespace gpuctl::sys {
namespace {

using gpuctl::testing::TempDir;
using namespace std::chrono_literals;

TEST(PsiTrigger, FormatsSomeAndFull) {
  EXPECT_EQ(FormatPsiTrigger(PsiTriggerSpec{}), "some 150000 1000000");
  EXPECT_EQ(FormatPsiTrigger(PsiTriggerSpec{.full = true, .stall = 100ms, .window = 2s}), "full 100000 2000000");
}

TEST(PsiTrigger, ValidatesTheKernelLimits) {
  EXPECT_TRUE(ValidatePsiTriggerSpec(PsiTriggerSpec{}).ok());
  EXPECT_FALSE(ValidatePsiTriggerSpec(PsiTriggerSpec{.stall = 100ms, .window = 499ms}).ok());
  EXPECT_FALSE(ValidatePsiTriggerSpec(PsiTriggerSpec{.stall = 100ms, .window = 11s}).ok());
  EXPECT_FALSE(ValidatePsiTriggerSpec(PsiTriggerSpec{.stall = 0ms, .window = 1s}).ok());
  EXPECT_FALSE(ValidatePsiTriggerSpec(PsiTriggerSpec{.stall = 2s, .window = 1s}).ok());
  EXPECT_TRUE(ValidatePsiTriggerSpec(PsiTriggerSpec{.stall = 10s, .window = 10s}).ok());
}

TEST(PsiTrigger, WritesTheTriggerWithItsTerminator) {
  TempDir dir;
  dir.WriteFile("proc/pressure/memory", "");
  auto trigger = PsiTrigger::Open(dir.path() + "/proc/pressure/memory", PsiTriggerSpec{.full = true});
  ASSERT_TRUE(trigger.ok()) << trigger.status().ToString();
  EXPECT_EQ(ReadControlFile(dir.path() + "/proc/pressure/memory").value_or(""),
            std::string("full 150000 1000000\0", 20));
  auto outcome = (*trigger)->Wait(10ms);
  ASSERT_TRUE(outcome.ok()) << outcome.status().ToString();
  EXPECT_EQ(*outcome, WaitOutcome::kTimedOut);
}

TEST(PsiTrigger, OpenErrors) {
  TempDir dir;
  EXPECT_EQ(PsiTrigger::Open(dir.path() + "/proc/pressure/memory", PsiTriggerSpec{}).status().code(),
            ErrorCode::kNotFound);
  dir.WriteFile("memory.pressure", "");
  EXPECT_EQ(PsiTrigger::Open(dir.path() + "/memory.pressure", PsiTriggerSpec{.window = 100ms}).status().code(),
            ErrorCode::kInvalidArgument);
}

}  // namespace
}  // namespace gpuctl::sys
