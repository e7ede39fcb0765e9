// When gpuctld cannot keep the kernel's OOM killer off itself, the warning
// says it is the agent's own protection and what is lost without it.
#include "agents/sys/self_protection.h"

#include <gtest/gtest.h>

#include "tests/fakes/temp_dir.h"

namespace gpuctl::sys {
namespace {

TEST(ProtectAgentFromOomKiller, WritesMinus1000ForTheAgent) {
  testing::TempDir root;
  root.MakeDir("proc/4242");
  root.WriteFile("proc/4242/oom_score_adj", "0");
  ASSERT_TRUE(ProtectAgentFromOomKiller(HostFs(root.path()), 4242).ok());
  EXPECT_EQ(testing::ReadText(root.path() + "/proc/4242/oom_score_adj"), "-1000");
}

TEST(ProtectAgentFromOomKiller, AFailureSaysWhoseProtectionAndWhatIsLost) {
  testing::TempDir root;  // no proc/4242: the write fails, as without CAP_SYS_RESOURCE
  Status s = ProtectAgentFromOomKiller(HostFs(root.path()), 4242);
  ASSERT_FALSE(s.ok());
  EXPECT_NE(s.message().find("gpuctld cannot protect its own process (pid 4242) from the kernel's OOM killer"),
            std::string::npos)
      << s.message();
  EXPECT_NE(s.message().find("/proc/4242/oom_score_adj"), std::string::npos) << s.message();
  EXPECT_NE(s.message().find("the kernel may kill the agent itself, and with it the memory guard"),
            std::string::npos)
      << s.message();
}

}  // namespace
}  // namespace gpuctl::sys
