// The fake keeps the real drivers' contract, so code tested against it
// behaves the same against them.
#include "tests/fakes/fake_cgroup_driver.h"

#include <gtest/gtest.h>

namespace gpuctl::testing {
namespace {

TEST(FakeCgroupDriver, CreateAddKillRemove) {
  FakeCgroupDriver fake;
  ASSERT_TRUE(fake.CreateCgroup("/gpuctl").ok());
  ASSERT_TRUE(fake.CreateCgroup("/gpuctl/job").ok());
  EXPECT_EQ(fake.CreateCgroup("/gpuctl/job").code(), ErrorCode::kAlreadyExists);
  EXPECT_EQ(fake.CreateCgroup("/nope/job").code(), ErrorCode::kNotFound);
  EXPECT_EQ(fake.CreateCgroup("../x").code(), ErrorCode::kInvalidArgument);
  ASSERT_TRUE(fake.AddProcess("/gpuctl/job", 10).ok());
  ASSERT_TRUE(fake.AddProcess("/gpuctl/job", 11).ok());
  ASSERT_TRUE(fake.SetMemoryMax("/gpuctl/job", 1 << 20).ok());
  EXPECT_EQ(fake.MemoryLimit("/gpuctl/job").value_or(std::nullopt), std::optional<uint64_t>(1 << 20));
  EXPECT_EQ(fake.RemoveCgroup("/gpuctl").code(), ErrorCode::kFailedPrecondition) << "a child has processes";
  EXPECT_EQ(fake.RemoveCgroup("/gpuctl/job").code(), ErrorCode::kFailedPrecondition) << "has processes";
  ASSERT_TRUE(fake.KillAll("/gpuctl/job").ok());
  EXPECT_TRUE(fake.Processes("/gpuctl/job").value_or({1}).empty());
  EXPECT_EQ(fake.kills(), (std::vector<std::string>{"/gpuctl/job"}));
  EXPECT_TRUE(fake.RemoveCgroup("/gpuctl/job").ok());
  EXPECT_EQ(fake.MemoryCurrent("/gpuctl/job").status().code(), ErrorCode::kNotFound);
}

TEST(FakeCgroupDriver, AProcessLivesInOneCgroup) {
  FakeCgroupDriver fake;
  fake.Put("/a", {});
  fake.Put("/b", {});
  ASSERT_TRUE(fake.AddProcess("/a", 5).ok());
  ASSERT_TRUE(fake.AddProcess("/b", 5).ok());
  EXPECT_TRUE(fake.Get("/a")->procs.empty());
  EXPECT_EQ(fake.Get("/b")->procs, (std::vector<int64_t>{5}));
}

TEST(FakeCgroupDriver, SettableFailuresAndV1Limits) {
  FakeCgroupDriver v1(sys::CgroupVersion::kV1);
  v1.Put("/j", {});
  EXPECT_EQ(v1.SetMemoryHigh("/j", 1).code(), ErrorCode::kFailedPrecondition);
  EXPECT_EQ(v1.MemoryPressure("/j").status().code(), ErrorCode::kFailedPrecondition);
  v1.FailOn(FakeCgroupDriver::Op::kKillAll, Unavailable("stuck"));
  EXPECT_EQ(v1.KillAll("/j").code(), ErrorCode::kUnavailable);
  EXPECT_TRUE(v1.kills().empty());
  v1.ClearFailures();
  EXPECT_TRUE(v1.KillAll("/j").ok());
}

}  // namespace
}  // namespace gpuctl::testing
