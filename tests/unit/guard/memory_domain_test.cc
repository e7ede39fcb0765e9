#include "agents/guard/memory_domain.h"

#include <gtest/gtest.h>

#include "tests/fakes/fake_cgroup_driver.h"
#include "tests/fakes/temp_dir.h"
#include "common/units.h"

namespace gpuctl::guard {
namespace {

using gpuctl::testing::FakeCgroupDriver;
using gpuctl::testing::TempDir;


DomainReading Host(uint64_t total, uint64_t available) { return DomainReading{total, available, std::nullopt, std::nullopt}; }

TEST(CgroupReading, LimitMinusUsageCountingReclaimableFileAsFree) {
  CgroupMemory cg{1 * kGiB, 900 * kMiB, 100 * kMiB};
  DomainReading r = CgroupReading(cg, Host(64 * kGiB, 40 * kGiB), std::nullopt);
  EXPECT_EQ(r.total_bytes, 1 * kGiB);
  EXPECT_EQ(r.available_bytes, 224 * kMiB);  // 1024 - (900 - 100)
  EXPECT_FALSE(r.psi_full_avg10.has_value());
}

// The case: a job of 1.34 GiB in a 3 GiB domain whose usage also
// holds 1.37 GB of active file cache (old logs reread) is not near its line.
TEST(CgroupReading, ActiveFileCacheDoesNotMakeAFittingJobLookLikeARunaway) {
  const uint64_t job = 1340 * kMiB, cache = 1370ull * 1000 * 1000;
  CgroupMemory cg{3 * kGiB, job + cache, cache};
  DomainReading r = CgroupReading(cg, Host(64 * kGiB, 40 * kGiB), std::nullopt);
  EXPECT_EQ(r.available_bytes, 3 * kGiB - job);
}

TEST(CgroupReading, NeverMoreThanTheHostHas) {
  CgroupMemory cg{32 * kGiB, 1 * kGiB, 0};
  EXPECT_EQ(CgroupReading(cg, Host(64 * kGiB, 2 * kGiB), std::nullopt).available_bytes, 2 * kGiB);
}

TEST(CgroupReading, OverTheLimitIsZeroNotAWrap) {
  CgroupMemory over{1 * kGiB, 1 * kGiB + 4096, 0};
  EXPECT_EQ(CgroupReading(over, Host(64 * kGiB, 40 * kGiB), std::nullopt).available_bytes, 0u);
  CgroupMemory odd{1 * kGiB, 10 * kMiB, 50 * kMiB};  // stats read at different moments
  EXPECT_EQ(CgroupReading(odd, Host(64 * kGiB, 40 * kGiB), std::nullopt).available_bytes, 1 * kGiB);
}

TEST(CgroupReading, NoLimitMeansTheHost) {
  CgroupMemory unlimited{std::nullopt, 5 * kGiB, 0};
  DomainReading r = CgroupReading(unlimited, Host(64 * kGiB, 3 * kGiB), std::nullopt);
  EXPECT_EQ(r.total_bytes, 64 * kGiB);
  EXPECT_EQ(r.available_bytes, 3 * kGiB);
}

TEST(HostReading, MemAvailableAndFullPressure) {
  auto meminfo = sys::ParseMeminfo("MemTotal: 16777216 kB\nMemFree: 100 kB\nMemAvailable: 2097152 kB\n");
  ASSERT_TRUE(meminfo.ok());
  sys::Pressure psi;
  psi.full = sys::PressureLine{12.5, 3, 1, 100};
  DomainReading r = HostReading(*meminfo, psi);
  EXPECT_EQ(r.total_bytes, 16 * kGiB);
  EXPECT_EQ(r.available_bytes, 2 * kGiB);
  EXPECT_EQ(r.psi_full_avg10, 12.5);
  EXPECT_FALSE(HostReading(*meminfo, sys::Pressure{}).psi_full_avg10.has_value()) << "no full line";
}

class MemoryDomainReaderTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_.WriteFile("proc/meminfo", "MemTotal: 67108864 kB\nMemFree: 1000 kB\nMemAvailable: 41943040 kB\n");
    dir_.WriteFile("proc/pressure/memory",
                   "some avg10=1.00 avg60=0.00 avg300=0.00 total=10\nfull avg10=0.50 avg60=0.00 avg300=0.00 total=5\n");
  }
  TempDir dir_;
};

TEST_F(MemoryDomainReaderTest, HostFromTheProcTree) {
  sys::HostFs fs(dir_.path());
  auto r = MemoryDomainReader(GuardDomain{}, fs, nullptr).Read();
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_EQ(r->total_bytes, 64 * kGiB);
  EXPECT_EQ(r->available_bytes, 40 * kGiB);
  EXPECT_EQ(r->psi_full_avg10, 0.5);
}

TEST_F(MemoryDomainReaderTest, CgroupThroughTheDriver) {
  sys::HostFs fs(dir_.path());
  FakeCgroupDriver cgroups;
  sys::Pressure psi;
  psi.full = sys::PressureLine{20.0, 0, 0, 0};
  cgroups.Put("/lxc/c1", {.max = 2 * kGiB, .current = 1 * kGiB + 512 * kMiB, .reclaimable_file = 256 * kMiB,
                          .pressure = psi});
  GuardDomain domain{GuardDomain::Kind::kCgroup, "/lxc/c1"};
  auto r = MemoryDomainReader(domain, fs, &cgroups).Read();
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_EQ(r->total_bytes, 2 * kGiB);
  EXPECT_EQ(r->available_bytes, 768 * kMiB);
  EXPECT_EQ(r->psi_full_avg10, 20.0);
}

TEST_F(MemoryDomainReaderTest, CgroupErrorsSayWhichDomain) {
  sys::HostFs fs(dir_.path());
  FakeCgroupDriver cgroups(sys::CgroupVersion::kV1);
  GuardDomain domain{GuardDomain::Kind::kCgroup, "/gone"};
  auto missing = MemoryDomainReader(domain, fs, &cgroups).Read();
  EXPECT_EQ(missing.status().code(), ErrorCode::kNotFound);
  EXPECT_NE(missing.status().message().find("/gone"), std::string::npos);
  EXPECT_EQ(MemoryDomainReader(domain, fs, nullptr).Read().status().code(), ErrorCode::kFailedPrecondition);

  // v1: no per-cgroup PSI, and a failing memory.stat counts no cache as free.
  cgroups.Put("/gone", {.max = 1 * kGiB, .current = 512 * kMiB, .reclaimable_file = 256 * kMiB});
  cgroups.FailOn(FakeCgroupDriver::Op::kReclaimableFile, IoError("memory.stat unreadable"));
  auto v1 = MemoryDomainReader(domain, fs, &cgroups).Read();
  ASSERT_TRUE(v1.ok()) << v1.status().ToString();
  EXPECT_EQ(v1->available_bytes, 512 * kMiB);
  EXPECT_FALSE(v1->psi_full_avg10.has_value());
  cgroups.FailOn(FakeCgroupDriver::Op::kMemoryCurrent, Status(ErrorCode::kPermissionDenied, "nope"));
  EXPECT_EQ(MemoryDomainReader(domain, fs, &cgroups).Read().status().code(), ErrorCode::kPermissionDenied);
}

}  // namespace
}  // namespace gpuctl::guard
