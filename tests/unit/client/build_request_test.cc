#include "client/build_request.h"

#include <gtest/gtest.h>

namespace gpuctl::client {
namespace {

BuildFlags Flags() {
  BuildFlags flags;
  flags.job.name = "fa";
  flags.job.command = {"pip", "install", "flash-attn", "--no-build-isolation"};
  return flags;
}

TEST(BuildBuildJobRequest, MakesABuildJobWithItsOptions) {
  BuildFlags flags = Flags();
  flags.mem_budget = "64G";
  flags.cpus = "32";
  flags.archs = "9.0, 10.0";
  flags.job.env = {"MAX_JOBS=4"};
  auto request = BuildBuildJobRequest(flags, "/home/me/src");
  ASSERT_TRUE(request.ok()) << request.status().message();
  const v1::JobSpec& spec = request->spec();
  EXPECT_EQ(spec.kind(), "build");
  EXPECT_EQ(spec.name(), "fa");
  EXPECT_EQ(spec.cwd(), "/home/me/src");
  EXPECT_EQ(spec.command_size(), 4);
  EXPECT_EQ(spec.env().at("MAX_JOBS"), "4");
  EXPECT_EQ(spec.build().mem_budget_bytes(), uint64_t{64} << 30);
  EXPECT_EQ(spec.build().cpus(), 32u);
  ASSERT_EQ(spec.build().archs_size(), 2);
  EXPECT_EQ(spec.build().archs(1), "10.0");
}

TEST(BuildBuildJobRequest, DefaultsLeaveTheChoiceToTheAgent) {
  auto request = BuildBuildJobRequest(Flags(), "/src");
  ASSERT_TRUE(request.ok());
  EXPECT_FALSE(request->spec().build().has_mem_budget_bytes());
  EXPECT_EQ(request->spec().build().cpus(), 0u);
  EXPECT_EQ(request->spec().build().archs_size(), 0);
}

TEST(BuildBuildJobRequest, RefusesBadInputBeforeAnythingStarts) {
  BuildFlags empty = Flags();
  empty.job.command.clear();
  EXPECT_EQ(BuildBuildJobRequest(empty, "/src").status().code(), ErrorCode::kInvalidArgument);
  for (const char* budget : {"lots", "-1G", "12Q"}) {
    BuildFlags flags = Flags();
    flags.mem_budget = budget;
    EXPECT_EQ(BuildBuildJobRequest(flags, "/src").status().code(), ErrorCode::kInvalidArgument) << budget;
  }
  for (const char* cpus : {"0", "-2", "1.5", "many", "99999999"}) {
    BuildFlags flags = Flags();
    flags.cpus = cpus;
    EXPECT_EQ(BuildBuildJobRequest(flags, "/src").status().code(), ErrorCode::kInvalidArgument) << cpus;
  }
  for (const char* archs : {",", "9.0,", ",9.0", "9.0,,10.0"}) {
    BuildFlags flags = Flags();
    flags.archs = archs;
    EXPECT_EQ(BuildBuildJobRequest(flags, "/src").status().code(), ErrorCode::kInvalidArgument) << archs;
  }
  BuildFlags bad_name = Flags();
  bad_name.job.name = "../x";
  EXPECT_EQ(BuildBuildJobRequest(bad_name, "/src").status().code(), ErrorCode::kInvalidArgument);
}

TEST(DefaultBuildName, IsTheUtcTimeAndAValidJobName) {
  EXPECT_EQ(DefaultBuildName(1796083200000), "build-20261201-000000");
}

}  // namespace
}  // namespace gpuctl::client
