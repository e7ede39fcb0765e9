// Global flags after the subcommand, and the completion scripts, through
// RunCli with no agent listening.
#include <gtest/gtest.h>
#include <stdlib.h>

#include <cstdio>
#include <fstream>
#include <sstream>

#include "client/cli.h"
#include "client/exit_codes.h"
#include "tests/unit/client/cli_run.h"
#include "tests/unit/client/completion_run.h"
#include "tests/fakes/temp_dir.h"

namespace gpuctl::client {
namespace {


TEST(GlobalFlagsTest, WorkAfterTheSubcommand) {
  // Before and after give the same answer: the agent named by --agent is
  // tried (and is not there), not a usage error.
  for (const auto& args : std::vector<std::vector<std::string>>{
           {"--agent", "unix:/nonexistent/other.sock", "health"},
           {"health", "--agent", "unix:/nonexistent/other.sock"},
           {"train", "list", "--agent", "unix:/nonexistent/other.sock", "-o", "json"},
       }) {
    CliRun r = RunGpuctl(args);
    EXPECT_EQ(r.code, kExitUnreachable) << args.front() << ": " << r.err;
    EXPECT_NE(r.err.find("other.sock"), std::string::npos) << r.err;
  }
  // A flag nobody knows is still a usage error.
  EXPECT_EQ(RunGpuctl({"health", "--no-such-flag"}).code, kExitUsage);
}

TEST(GlobalFlagsTest, NodeFlagsAfterProvisionNode) {
  // The example: was a usage error; now it gets as far as looking
  // the node up (which this test's empty node store does not have).
  testing::TempDir home;
  ::setenv("XDG_CONFIG_HOME", home.path().c_str(), 1);
  CliRun r = RunGpuctl({"provision", "node", "n1", "--dry-run", "--accept-new-host-key"});
  ::unsetenv("XDG_CONFIG_HOME");
  EXPECT_NE(r.code, kExitOk);
  EXPECT_EQ(r.err.find("were not expected"), std::string::npos) << r.err;
  EXPECT_EQ(r.err.find("following argument"), std::string::npos) << r.err;
}

// Numbers out of range are usage errors before any agent is asked.
TEST(FlagRangesTest, OutOfRangeNumbersAreUsageErrors) {
  for (const auto& args : std::vector<std::vector<std::string>>{
           {"train", "logs", "j", "--from-offset", "-5"},
           {"train", "logs", "j", "--from-offset=-5"},
           {"train", "logs", "j", "--from-offset", "1e3"},
           {"train", "logs", "j", "--tail", "99999999999"},
           {"health", "--watch", "--interval", "4294968s"},
           {"health", "--watch", "--interval", "99999999999999999999h"},
       }) {
    CliRun r = RunGpuctl(args);
    EXPECT_EQ(r.code, kExitUsage) << args.back() << ": " << r.err;
    EXPECT_EQ(r.err.find("cannot reach"), std::string::npos) << r.err;
  }
}


TEST(CompletionTest, BashOffersSubcommandsAndFlagsOfThePathTyped) {
  CliRun r = RunGpuctl({"completion", "bash"});
  ASSERT_EQ(r.code, kExitOk) << r.err;
  ASSERT_NE(r.out.find("complete -o default -F _gpuctl gpuctl"), std::string::npos);
  EXPECT_EQ(RunBashCompletion(r.out, "gpuctl tr", 1), "train\n");
  std::string train = RunBashCompletion(r.out, "gpuctl train ''", 2);
  for (const char* word : {"start", "logs", "status", "stop", "list"}) {
    EXPECT_NE(train.find(word), std::string::npos) << word << " in " << train;
  }
  EXPECT_EQ(RunBashCompletion(r.out, "gpuctl train start --an", 3), "--anchors --anchors-flag\n");
  EXPECT_EQ(RunBashCompletion(r.out, "gpuctl train start --all", 3), "--alloc-conf\n");
  // Global flags after a subcommand, and nothing after --.
  EXPECT_NE(RunBashCompletion(r.out, "gpuctl node bootstrap n1 --acc", 4).find("--accept-new-host-key"), std::string::npos);
  EXPECT_EQ(RunBashCompletion(r.out, "gpuctl train start -- python --an", 5), "\n");
}

TEST(CompletionTest, ZshUsesTheSameTable) {
  CliRun r = RunGpuctl({"completion", "zsh"});
  ASSERT_EQ(r.code, kExitOk) << r.err;
  EXPECT_NE(r.out.find("bashcompinit"), std::string::npos);
  EXPECT_NE(r.out.find("_gpuctl()"), std::string::npos);
  EXPECT_EQ(RunGpuctl({"completion", "fish"}).code, kExitUsage);
}

}  // namespace
}  // namespace gpuctl::client
