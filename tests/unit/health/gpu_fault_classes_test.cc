#include "agents/health/gpu_fault_classes.h"

#include <gtest/gtest.h>

#include <set>

namespace gpuctl::health {
namespace {

// The classes as decided (the task's list), written out here apart from the
// table so that a table edit that moves a Xid shows up as a failure.
TEST(GpuFaultClasses, GpuFaultsDrain) {
  for (int xid : {48, 63, 64, 74, 79, 94, 95, 119, 120, 154}) {
    EXPECT_EQ(ClassifyXid(xid), XidClass::kGpuFault) << "Xid " << xid;
  }
}

TEST(GpuFaultClasses, ApplicationFaultsAreTheJobs) {
  for (int xid : {13, 31, 43, 45, 68, 109}) {
    EXPECT_EQ(ClassifyXid(xid), XidClass::kApplication) << "Xid " << xid;
  }
}

TEST(GpuFaultClasses, EveryTableEntryHasTheExpectedClass) {
  const std::set<int> gpu_faults = {48, 63, 64, 74, 79, 94, 95, 119, 120, 154};
  const std::set<int> application = {13, 31, 43, 45, 68, 109};
  for (const XidInfo& info : XidTable()) {
    XidClass expected = gpu_faults.count(info.xid)    ? XidClass::kGpuFault
                        : application.count(info.xid) ? XidClass::kApplication
                                                      : XidClass::kInformational;
    EXPECT_EQ(info.cls, expected) << "Xid " << info.xid;
    EXPECT_EQ(ClassifyXid(info.xid), info.cls) << "Xid " << info.xid;
  }
  // And every decided Xid is in the table (with words for its messages).
  for (int xid : gpu_faults) EXPECT_NE(FindXid(xid), nullptr) << "Xid " << xid;
  for (int xid : application) EXPECT_NE(FindXid(xid), nullptr) << "Xid " << xid;
}

TEST(GpuFaultClasses, UnknownXidsAreInformational) {
  for (int xid : {0, 1, 8, 62, 92, 999, -1, 2147483647}) {
    EXPECT_EQ(ClassifyXid(xid), XidClass::kInformational) << "Xid " << xid;
  }
  EXPECT_EQ(FindXid(999), nullptr);
  EXPECT_EQ(XidSummary(999), "unlisted Xid");
}

TEST(GpuFaultClasses, TableHasNoDuplicateXidAndIsSorted) {
  std::set<int> seen;
  int previous = -1;
  for (const XidInfo& info : XidTable()) {
    EXPECT_TRUE(seen.insert(info.xid).second) << "Xid " << info.xid << " twice";
    EXPECT_GT(info.xid, previous) << "the table is searched by bisection";
    previous = info.xid;
  }
  EXPECT_GE(seen.size(), 16u);
}

TEST(GpuFaultClasses, EveryEntryHasASummaryAndASource) {
  for (const XidInfo& info : XidTable()) {
    EXPECT_FALSE(info.summary.empty()) << "Xid " << info.xid;
    EXPECT_NE(info.source.find("Xid"), std::string_view::npos) << "Xid " << info.xid << ": " << info.source;
    EXPECT_EQ(XidSummary(info.xid), info.summary);
    EXPECT_EQ(FindXid(info.xid), &info);
  }
  EXPECT_EQ(XidSummary(79), "GPU has fallen off the bus");
  EXPECT_EQ(XidSummary(48), "Double bit ECC error (DBE)");
}

TEST(GpuFaultClasses, ClassNamesAndRowRemapFailure) {
  EXPECT_EQ(XidClassName(XidClass::kGpuFault), "gpu_fault");
  EXPECT_EQ(XidClassName(XidClass::kApplication), "application");
  EXPECT_EQ(XidClassName(XidClass::kInformational), "informational");
  static_assert(kRowRemapFailure == "row remap failure");
  for (const XidInfo& info : XidTable()) EXPECT_NE(info.summary, kRowRemapFailure);
}

}  // namespace
}  // namespace gpuctl::health
