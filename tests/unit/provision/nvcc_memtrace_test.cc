#include "agents/provision/nvcc_memtrace.h"

#include <gtest/gtest.h>

#include "tests/fakes/temp_dir.h"

namespace gpuctl::provision {
namespace {

TEST(ParseNvccMemtrace, ReadsRowsByColumnName) {
  auto rows = ParseNvccMemtrace(
      "t_s,job,rss_mib,procs,mem_available_mib\n"
      "0.00,a,46,9,128309\n"
      "0.25,b,1200,12,127000\r\n"
      "\n"
      "0.50,a,5000,10,120000");
  ASSERT_TRUE(rows.ok()) << rows.status().ToString();
  ASSERT_EQ(rows->size(), 3u);
  EXPECT_DOUBLE_EQ((*rows)[1].t_s, 0.25);
  EXPECT_EQ((*rows)[1].job, "b");
  EXPECT_EQ((*rows)[1].rss_mib, 1200u);
  EXPECT_EQ((*rows)[1].procs, 12u);
  EXPECT_EQ((*rows)[1].mem_available_mib, 127000u);
}

TEST(ParseNvccMemtrace, FindsColumnsInAnyOrder) {
  auto rows = ParseNvccMemtrace("job,procs,rss_mib,mem_available_mib,t_s,extra\nx,3,77,1000,1.5,zz\n");
  ASSERT_TRUE(rows.ok()) << rows.status().ToString();
  ASSERT_EQ(rows->size(), 1u);
  EXPECT_EQ((*rows)[0].job, "x");
  EXPECT_EQ((*rows)[0].rss_mib, 77u);
  EXPECT_EQ((*rows)[0].procs, 3u);
  EXPECT_DOUBLE_EQ((*rows)[0].t_s, 1.5);
}

TEST(ParseNvccMemtrace, RefusesAMissingColumnABadNumberAndAShortRow) {
  EXPECT_FALSE(ParseNvccMemtrace("t_s,job,procs,mem_available_mib\n").ok());
  EXPECT_FALSE(ParseNvccMemtrace("").ok());
  auto bad = ParseNvccMemtrace("t_s,job,rss_mib,procs,mem_available_mib\n0.1,a,12x,3,4\n");
  ASSERT_FALSE(bad.ok());
  EXPECT_NE(bad.status().message().find("line 2"), std::string::npos) << bad.status().message();
  EXPECT_FALSE(ParseNvccMemtrace("t_s,job,rss_mib,procs,mem_available_mib\n0.1,a,12,3\n").ok());
  EXPECT_FALSE(ParseNvccMemtrace("t_s,job,rss_mib,procs,mem_available_mib\n0.1,,12,3,4\n").ok());
}

TEST(PeakRssMibByJob, KeepsEachJobsHighestSample) {
  std::vector<MemtraceRow> rows = {{0, "a", 10, 1, 0}, {1, "b", 7, 1, 0}, {2, "a", 30, 1, 0}, {3, "a", 20, 1, 0}};
  auto peaks = PeakRssMibByJob(rows);
  ASSERT_EQ(peaks.size(), 2u);
  EXPECT_EQ(peaks["a"], 30u);
  EXPECT_EQ(peaks["b"], 7u);
}

TEST(ParseNvccMemtrace, ReadsBothRealTraces) {
  for (const char* name : {"nvcc-memtrace-1arch-t4.csv", "nvcc-memtrace-2arch.csv"}) {
    auto rows = ParseNvccMemtrace(testing::ReadFixture(name));
    ASSERT_TRUE(rows.ok()) << name << ": " << rows.status().ToString();
    EXPECT_GT(rows->size(), 1000u) << name;
    EXPECT_EQ(PeakRssMibByJob(*rows).size(), 5u) << name << ": the README says five jobs";
  }
}

}  // namespace
}  // namespace gpuctl::provision
