#include "agents/train/container_build_gate.h"

#include <gtest/gtest.h>

#include "agents/sys/confined_root.h"
#include "common/units.h"
#include "tests/fakes/fake_cgroup_driver.h"
#include "tests/fakes/fake_process_control.h"
#include "tests/fakes/temp_dir.h"

namespace gpuctl::train {
namespace {

using testing::FakeCgroupDriver;
using testing::FakeProcessControl;
using testing::ReadText;
using testing::TempDir;

TEST(ContainerCgroupOfTest, TakesThePathThroughTheContainersOwnComponent) {
  EXPECT_EQ(ContainerCgroupOf("/lxc.payload.gpuctl-deb/init.scope"), "/lxc.payload.gpuctl-deb");
  EXPECT_EQ(ContainerCgroupOf("/lxc.payload.200"), "/lxc.payload.200");
  EXPECT_EQ(ContainerCgroupOf("/lxc/200/ns/user.slice/session-1.scope"), "/lxc/200");  // Proxmox
  EXPECT_EQ(ContainerCgroupOf("/lxc/gpuctl-deb"), "/lxc/gpuctl-deb");                   // LXC 3, cgroup v1
  EXPECT_EQ(ContainerCgroupOf("/machine.slice/lxc/7/x"), "/machine.slice/lxc/7");
}

TEST(ContainerCgroupOfTest, RefusesWhatIsNoContainers) {
  for (const char* path : {"/", "", "/user.slice/session-2.scope", "/lxc", "/lxc/", "/lxc.payload.", "/lxc.monitor.200",
                           "/lxcfoo/1", "/gpuctl/job@r1"}) {
    EXPECT_EQ(ContainerCgroupOf(path), std::nullopt) << path;
  }
}

class ContainerBuildGateTest : public ::testing::Test {
 protected:
  ContainerBuildGateTest() {
    sys::AddConfinedRoot(dir_.path() + "/lxc/{vmid}/rootfs");
    root_ = dir_.path() + "/lxc/300/rootfs";
    dir_.MakeDir("lxc/300/rootfs/var/lib/gpuctl/jobs/b");
    record_.spec.name = "b";
    record_.spec.kind = std::string(kJobKindBuild);
    record_.spec.container = "300";
    record_.spec.mem_limit_bytes = 10 * kGiB;
    record_.run_id = "r1";
    record_.state = JobState::kRunning;
    record_.cgroup_gate = root_ + "/var/lib/gpuctl/jobs/b/cgroup_gate";
    cgroups_.Put("/lxc.payload.ct1", {.max = 8 * kGiB, .current = 1 * kGiB});
  }
  // The wrapper, pid 77 in the container and 4242 here, waits at the gate.
  void WrapperWaits(const std::string& cgroup = "/lxc.payload.ct1/.lxc") {
    dir_.WriteFile("lxc/300/rootfs/var/lib/gpuctl/jobs/b/cgroup_gate.pid", "77\n");
    processes_.AddProcess(4242, 4242, 1);
    processes_.MapContainerPid(root_, 77, 4242);
    processes_.SetMemoryCgroup(4242, cgroup);
  }
  std::string Answer() const { return ReadText(root_ + "/var/lib/gpuctl/jobs/b/cgroup_gate"); }

  TempDir dir_;
  std::string root_;
  JobRecord record_;
  FakeProcessControl processes_;
  FakeCgroupDriver cgroups_{sys::CgroupVersion::kV1};
};

TEST_F(ContainerBuildGateTest, NothingHappensBeforeTheWrapperWaits) {
  EXPECT_FALSE(OpenContainerBuildGate(record_, processes_, cgroups_));
  EXPECT_FALSE(std::filesystem::exists(root_ + "/var/lib/gpuctl/jobs/b/cgroup_gate"));
  EXPECT_EQ(record_.cgroup, "");
  EXPECT_FALSE(cgroups_.Get("/lxc.payload.ct1/gpuctl-b@r1"));
}

TEST_F(ContainerBuildGateTest, TheWrapperIsMovedBeneathTheContainersCgroupWithTheRoomItsLimitLeaves) {
  WrapperWaits();
  EXPECT_TRUE(OpenContainerBuildGate(record_, processes_, cgroups_));
  EXPECT_EQ(Answer(), "ok\n");
  EXPECT_EQ(record_.cgroup, "/lxc.payload.ct1/gpuctl-b@r1");
  EXPECT_EQ(record_.cgroup_gate, "");
  std::optional<FakeCgroupDriver::Cgroup> placed = cgroups_.Get("/lxc.payload.ct1/gpuctl-b@r1");
  ASSERT_TRUE(placed);
  EXPECT_EQ(placed->procs, std::vector<int64_t>{4242});
  // 10 GiB asked, but the container's 8 GiB limit leaves 7 beside its 1 in use.
  EXPECT_EQ(placed->max, 7 * kGiB);
  EXPECT_EQ(record_.spec.mem_limit_bytes, 7 * kGiB);
  // Answered once: the next refresh leaves it alone.
  EXPECT_FALSE(OpenContainerBuildGate(record_, processes_, cgroups_));
}

TEST_F(ContainerBuildGateTest, AContainerWithoutALimitKeepsTheBuildsOwnBudget) {
  cgroups_.Put("/lxc/300", {});
  WrapperWaits("/lxc/300/ns/init.scope");
  EXPECT_TRUE(OpenContainerBuildGate(record_, processes_, cgroups_));
  EXPECT_EQ(Answer(), "ok\n");
  EXPECT_EQ(record_.cgroup, "/lxc/300/gpuctl-b@r1");
  EXPECT_EQ(cgroups_.Get("/lxc/300/gpuctl-b@r1")->max, 10 * kGiB);
}

TEST_F(ContainerBuildGateTest, AWrapperOutsideAnyContainersCgroupIsToldWhyAndNotPlaced) {
  WrapperWaits("/user.slice/session-4.scope");
  EXPECT_TRUE(OpenContainerBuildGate(record_, processes_, cgroups_));
  EXPECT_EQ(Answer(),
            "cannot govern the build: its process is in memory cgroup /user.slice/session-4.scope, which is no LXC "
            "container's\n");
  EXPECT_EQ(record_.cgroup, "");
  EXPECT_EQ(record_.cgroup_gate, "");
}

TEST_F(ContainerBuildGateTest, AFullContainerIsRefusedNamingItsRoom) {
  cgroups_.Put("/lxc.payload.ct1", {.max = 2 * kGiB, .current = 1900 * kMiB});
  WrapperWaits();
  EXPECT_TRUE(OpenContainerBuildGate(record_, processes_, cgroups_));
  EXPECT_NE(Answer().find("container cgroup /lxc.payload.ct1 has 148.0 MiB left under its memory limit"), std::string::npos)
      << Answer();
  EXPECT_NE(Answer().find("raise its limit"), std::string::npos) << Answer();
  EXPECT_EQ(record_.cgroup, "");
}

TEST_F(ContainerBuildGateTest, AFailedMoveIsAnsweredAndTheRecordKeepsNoCgroup) {
  cgroups_.FailOn(FakeCgroupDriver::Op::kAddProcess, Status(ErrorCode::kPermissionDenied, "cgroup.procs: permission denied"));
  WrapperWaits();
  EXPECT_TRUE(OpenContainerBuildGate(record_, processes_, cgroups_));
  EXPECT_NE(Answer().find("cannot govern the build: moving the build into /lxc.payload.ct1/gpuctl-b@r1"),
            std::string::npos)
      << Answer();
  EXPECT_EQ(record_.cgroup, "");
  EXPECT_FALSE(cgroups_.Get("/lxc.payload.ct1/gpuctl-b@r1")) << "the cgroup it never entered is left behind";
}

TEST_F(ContainerBuildGateTest, AnEndedRunIsNotPlaced) {
  WrapperWaits();
  record_.state = JobState::kFailed;
  EXPECT_FALSE(OpenContainerBuildGate(record_, processes_, cgroups_));
  EXPECT_FALSE(cgroups_.Get("/lxc.payload.ct1/gpuctl-b@r1"));
}

}  // namespace
}  // namespace gpuctl::train
