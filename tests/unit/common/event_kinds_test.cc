#include "common/event_kinds.h"

#include <set>
#include <string>

#include <gtest/gtest.h>

namespace gpuctl::event_kind {
namespace {

// The strings are a contract with scripts (`gpuctl events -o json`) and with
// older clients: a change here is a break on the wire, not a rename.
TEST(EventKinds, SpellTheWireStrings) {
  EXPECT_EQ(std::string(kJobStarted), "job_started");
  EXPECT_EQ(std::string(kJobEnded), "job_ended");
  EXPECT_EQ(std::string(kJobQueued), "job_queued");
  EXPECT_EQ(std::string(kJobOrphaned), "job_orphaned");
  EXPECT_EQ(std::string(kGpuMemoryHigh), "gpu_memory_high");
  EXPECT_EQ(std::string(kOomRemediation), "oom_remediation");
  EXPECT_EQ(std::string(kOomRemediationHeld), "oom_remediation_held");
  EXPECT_EQ(std::string(kOomGaveUp), "oom_gave_up");
  EXPECT_EQ(std::string(kCudaOom), "cuda_oom");
  EXPECT_EQ(std::string(kAllocConfInvalid), "alloc_conf_invalid");
  EXPECT_EQ(std::string(kNcclError), "nccl_error");
  EXPECT_EQ(std::string(kTraceback), "traceback");
  EXPECT_EQ(std::string(kSignal), "signal");
  EXPECT_EQ(std::string(kGuardKill), "guard_kill");
  EXPECT_EQ(std::string(kGuardWarning), "guard_warning");
  EXPECT_EQ(std::string(kGuardNoVictim), "guard_no_victim");
  EXPECT_EQ(std::string(kBuildThrottled), "build_throttled");
  EXPECT_EQ(std::string(kBuildFailed), "build_failed");
  EXPECT_EQ(std::string(kBuildSummary), "build_summary");
  EXPECT_EQ(std::string(kBuildLeftRunning), "build_left_running");
  EXPECT_EQ(std::string(kEventsDropped), "events_dropped");
  EXPECT_EQ(std::string(kJobHung), "job_hung");
  EXPECT_EQ(std::string(kJobRelaunched), "job_relaunched");
  EXPECT_EQ(std::string(kJobGaveUp), "job_gave_up");
  EXPECT_EQ(std::string(kGpuFault), "gpu_fault");
  EXPECT_EQ(std::string(kGpuDrained), "gpu_drained");
  EXPECT_EQ(std::string(kGpuUndrained), "gpu_undrained");
}

TEST(EventKinds, AreDistinct) {
  std::set<std::string> kinds = {kJobStarted,    kJobEnded,       kJobQueued,          kJobOrphaned,
                                 kGpuMemoryHigh, kOomRemediation, kOomRemediationHeld, kOomGaveUp,
                                 kCudaOom,       kAllocConfInvalid, kNcclError,        kTraceback,
                                 kSignal,        kGuardKill,      kGuardWarning,       kGuardNoVictim,
                                 kBuildThrottled, kBuildFailed,   kBuildSummary,       kEventsDropped,
                                 kJobHung,       kJobRelaunched,  kJobGaveUp,          kGpuFault,
                                 kGpuDrained,    kGpuUndrained,   kBuildLeftRunning};
  EXPECT_EQ(kinds.size(), 27u);
}

}  // namespace
}  // namespace gpuctl::event_kind
