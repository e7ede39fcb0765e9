// The one detector of "where am I running", on fixture trees of each kind of
// machine and on the clue shapes that used to be read alone.
#include "agents/sys/where_running.h"

#include <gtest/gtest.h>

#include <algorithm>

#include "tests/fakes/temp_dir.h"
#include "tests/fakes/where_running_trees.h"

namespace gpuctl::sys {
namespace {

using gpuctl::testing::TempDir;

bool HasEvidence(const WhereRunning& where, std::string_view text) {
  return std::any_of(where.evidence.begin(), where.evidence.end(),
                     [&](const std::string& e) { return e.find(text) != std::string::npos; });
}

std::string AllEvidence(const WhereRunning& where) {
  std::string out;
  for (const std::string& e : where.evidence) out += "\n  " + e;
  return out;
}

TEST(WhereRunning, DockerOnCgroupV1) {
  TempDir dir;
  testing::WriteDockerV1Tree(dir);
  WhereRunning where = DetectWhereRunning(HostFs(dir.path()));
  EXPECT_EQ(where.kind, WhereKind::kDocker) << AllEvidence(where);
  EXPECT_TRUE(where.container());
  EXPECT_EQ(where.evidence.front(), "pid 1 cgroup /docker/3f1c0ffee0ddba11");
  EXPECT_TRUE(HasEvidence(where, "/.dockerenv")) << AllEvidence(where);
  EXPECT_STREQ(WhereKindName(where.kind), "docker");
}

TEST(WhereRunning, DockerOnCgroupV2InAVmIsADockerContainerWithTheHostsHypervisor) {
  TempDir dir;
  testing::WriteDockerV2InVmTree(dir);
  WhereRunning where = DetectWhereRunning(HostFs(dir.path()));
  EXPECT_EQ(where.kind, WhereKind::kDocker) << AllEvidence(where);
  EXPECT_EQ(where.hypervisor, "QEMU");
  EXPECT_TRUE(HasEvidence(where, "root fs overlay")) << AllEvidence(where);
  EXPECT_TRUE(HasEvidence(where, "(the host is a VM)")) << AllEvidence(where);
}

TEST(WhereRunning, LxcGuestOnCgroupV2FromPid1Environment) {
  TempDir dir;
  testing::WriteLxcGuestV2Tree(dir);
  WhereRunning where = DetectWhereRunning(HostFs(dir.path()));
  EXPECT_EQ(where.kind, WhereKind::kLxc) << AllEvidence(where);
  EXPECT_EQ(where.evidence.front(), "pid 1 environment container=lxc");
  EXPECT_STREQ(WhereKindName(where.kind), "lxc");
}

TEST(WhereRunning, LxcGuestOnCgroupV1FromPid1CgroupWhenTheEnvironmentIsUnreadable) {
  TempDir dir;
  testing::WriteLxcGuestV1Tree(dir);
  WhereRunning where = DetectWhereRunning(HostFs(dir.path()));
  EXPECT_EQ(where.kind, WhereKind::kLxc) << AllEvidence(where);
  EXPECT_EQ(where.evidence.front(), "pid 1 cgroup /lxc/101");
}

// Issue 24: this machine's health said "in docker" and its probe "host".
TEST(WhereRunning, VmWithAStaleDockerenvIsAVm) {
  TempDir dir;
  testing::WriteVmWithStaleDockerenvTree(dir);
  WhereRunning where = DetectWhereRunning(HostFs(dir.path()));
  EXPECT_EQ(where.kind, WhereKind::kVm) << AllEvidence(where);
  EXPECT_FALSE(where.container());
  EXPECT_EQ(where.hypervisor, "") << "the cpu flag does not name it";
  EXPECT_EQ(where.evidence.front(), "cpu flag hypervisor");
  EXPECT_TRUE(HasEvidence(where, "pid 1 cgroup /")) << AllEvidence(where);
  EXPECT_TRUE(HasEvidence(where, "/.dockerenv ignored: nothing else says container")) << AllEvidence(where);
  EXPECT_TRUE(HasEvidence(where, "/proc/1/environ unreadable")) << AllEvidence(where);
}

TEST(WhereRunning, KvmVmOnCgroupV2NamesItsHypervisorFromDmi) {
  TempDir dir;
  testing::WriteKvmVmV2Tree(dir);
  WhereRunning where = DetectWhereRunning(HostFs(dir.path()));
  EXPECT_EQ(where.kind, WhereKind::kVm) << AllEvidence(where);
  EXPECT_EQ(where.hypervisor, "KVM");
  EXPECT_TRUE(HasEvidence(where, "DMI Red Hat KVM")) << AllEvidence(where);
  EXPECT_TRUE(HasEvidence(where, "pid 1 cgroup /init.scope")) << AllEvidence(where);
}

TEST(WhereRunning, BareMetal) {
  TempDir dir;
  testing::WriteBareMetalTree(dir);
  WhereRunning where = DetectWhereRunning(HostFs(dir.path()));
  EXPECT_EQ(where.kind, WhereKind::kBareMetal) << AllEvidence(where);
  EXPECT_EQ(where.hypervisor, "");
  EXPECT_TRUE(HasEvidence(where, "no hypervisor flag")) << AllEvidence(where);
  EXPECT_STREQ(WhereKindName(where.kind), "bare-metal");
}

TEST(WhereRunning, AnEmptyTreeIsBareMetal) {
  TempDir dir;
  EXPECT_EQ(DetectWhereRunning(HostFs(dir.path())).kind, WhereKind::kBareMetal);
}

// --- the weighing, on plain clues ---------------------------------------------

WhereClues HostClues(std::string_view pid1_cgroup = "0::/init.scope\n") {
  WhereClues c;
  c.pid1_environ_readable = true;
  c.pid1_cgroups = ParseProcCgroup(pid1_cgroup).value_or({});
  c.root_fstype = "ext4";
  return c;
}

TEST(DecideWhereRunning, EachMarkerAloneDecidesNothing) {
  for (auto set : {+[](WhereClues& c) { c.dockerenv = true; }, +[](WhereClues& c) { c.containerenv = true; },
                   +[](WhereClues& c) { c.dev_lxd = true; },
                   +[](WhereClues& c) { c.kubernetes_service_account = true; }}) {
    WhereClues c = HostClues();
    set(c);
    WhereRunning where = DecideWhereRunning(c);
    EXPECT_EQ(where.kind, WhereKind::kBareMetal) << AllEvidence(where);
    EXPECT_TRUE(HasEvidence(where, "ignored: nothing else says container")) << AllEvidence(where);
  }
}

TEST(DecideWhereRunning, AnOverlayRootAloneIsNotAContainer) {
  WhereClues c = HostClues();
  c.root_fstype = "overlay";  // Fedora's composefs, a live system
  EXPECT_EQ(DecideWhereRunning(c).kind, WhereKind::kBareMetal);
  c.containerenv = true;
  EXPECT_EQ(DecideWhereRunning(c).kind, WhereKind::kPodman) << "a marker with an overlay root";
}

TEST(DecideWhereRunning, RuntimeFilesAndPid1EnvironmentNameTheKind) {
  struct Case {
    std::string host_manager, systemd, env;
    WhereKind want;
  };
  for (const Case& c : {Case{"docker", "", "", WhereKind::kDocker}, Case{"", "podman", "", WhereKind::kPodman},
                        Case{"", "", "podman", WhereKind::kPodman}, Case{"", "systemd-nspawn", "", WhereKind::kOtherContainer},
                        Case{"", "", "lxc", WhereKind::kLxc}, Case{"", "", "wsl", WhereKind::kOtherContainer},
                        // The most explicit first: what the runtime wrote for the guest.
                        Case{"lxc", "", "docker", WhereKind::kLxc}}) {
    WhereClues clues = HostClues();
    clues.host_container_manager = c.host_manager;
    clues.systemd_container = c.systemd;
    clues.pid1_container_env = c.env;
    clues.cpu_hypervisor_flag = true;  // a container in a VM is a container
    EXPECT_EQ(DecideWhereRunning(clues).kind, c.want) << c.host_manager << "/" << c.systemd << "/" << c.env;
  }
}

TEST(DecideWhereRunning, Pid1CgroupPathsInV1AndV2Shapes) {
  struct Case {
    const char* cgroup;
    WhereKind want;
  };
  for (const Case& c : {Case{"0::/lxc.payload.101\n", WhereKind::kLxc},
                        Case{"4:memory:/lxc/101\n0::/lxc/101\n", WhereKind::kLxc},
                        Case{"3:cpu,cpuacct:/docker/0123abcd\n", WhereKind::kDocker},
                        Case{"0::/system.slice/docker-0123abcd.scope\n", WhereKind::kDocker},
                        Case{"0::/machine.slice/libpod-0123abcd.scope\n", WhereKind::kPodman},
                        Case{"4:memory:/kubepods/burstable/pod1/0123\n", WhereKind::kOtherContainer},
                        Case{"0::/\n", WhereKind::kBareMetal},
                        Case{"0::/init.scope\n", WhereKind::kBareMetal},
                        Case{"1:name=systemd:/init.scope\n0::/init.scope\n", WhereKind::kBareMetal}}) {
    EXPECT_EQ(DecideWhereRunning(HostClues(c.cgroup)).kind, c.want) << c.cgroup;
  }
}

TEST(DecideWhereRunning, Pid1InAnUnnamedCgroupCountsOnlyWithAnotherClue) {
  WhereClues c = HostClues("0::/sandbox/job7\n");
  EXPECT_EQ(DecideWhereRunning(c).kind, WhereKind::kBareMetal);
  c.dockerenv = true;
  EXPECT_EQ(DecideWhereRunning(c).kind, WhereKind::kDocker);
}

TEST(DecideWhereRunning, Pid1NotPid1OutsideAndOpenVzAreContainers) {
  WhereClues c = HostClues();
  c.pid1_sched_pid = 4242;
  WhereRunning where = DecideWhereRunning(c);
  EXPECT_EQ(where.kind, WhereKind::kOtherContainer);
  EXPECT_EQ(where.evidence.front(), "pid 1 is pid 4242 outside (/proc/1/sched)");
  c.pid1_sched_pid = 1;
  EXPECT_EQ(DecideWhereRunning(c).kind, WhereKind::kBareMetal);
  c.proc_vz = true;
  EXPECT_EQ(DecideWhereRunning(c).kind, WhereKind::kOtherContainer);
  c.proc_bc = true;  // the OpenVZ host itself
  EXPECT_EQ(DecideWhereRunning(c).kind, WhereKind::kBareMetal);
}

TEST(DecideWhereRunning, DmiAloneDecidesAVmExceptANameBareMetalSharesToo) {
  WhereClues c = HostClues();
  c.dmi_sys_vendor = "VMware, Inc.";
  c.dmi_product_name = "VMware Virtual Platform";
  WhereRunning where = DecideWhereRunning(c);
  EXPECT_EQ(where.kind, WhereKind::kVm);
  EXPECT_EQ(where.hypervisor, "VMware");
  c.dmi_sys_vendor = "Microsoft Corporation";
  c.dmi_product_name = "Virtual Machine";
  EXPECT_EQ(DecideWhereRunning(c).hypervisor, "Hyper-V");
  c.dmi_sys_vendor = "Amazon EC2";
  c.dmi_product_name = "p5.48xlarge";
  EXPECT_EQ(DecideWhereRunning(c).kind, WhereKind::kBareMetal) << "an EC2 .metal has the same vendor";
  c.cpu_hypervisor_flag = true;
  where = DecideWhereRunning(c);
  EXPECT_EQ(where.kind, WhereKind::kVm);
  EXPECT_EQ(where.hypervisor, "Amazon EC2");
}

// --- parsers ------------------------------------------------------------------

TEST(RootFsType, TheLastMountOnRootWins) {
  EXPECT_EQ(RootFsType(testing::MountinfoWithRoot("ext4", "/dev/vda")), "ext4");
  std::string stacked = testing::MountinfoWithRoot("ext4", "/dev/vda") +
                        "40 27 0:50 / / rw,relatime master:9 shared:12 - overlay overlay rw,lowerdir=/a\n";
  EXPECT_EQ(RootFsType(stacked), "overlay");
  EXPECT_EQ(RootFsType("27 1 254:0 / /home rw - ext4 /dev/vdb rw\n"), "");
  EXPECT_EQ(RootFsType("garbage\n\n27 1 / /\n"), "");
  EXPECT_EQ(RootFsType(""), "");
}

TEST(SchedPid, ReadsThePidAfterTheLastParenthesis) {
  EXPECT_EQ(SchedPid("systemd (1, #threads: 1)\n-----\n"), 1);
  EXPECT_EQ(SchedPid("bash (4242, #threads: 1)\n"), 4242);
  EXPECT_EQ(SchedPid("my (odd) name (77, #threads: 3)\n"), 77);
  EXPECT_EQ(SchedPid("no pid here\n"), std::nullopt);
  EXPECT_EQ(SchedPid("x (12345678901234, #threads: 1)\n"), std::nullopt);
  EXPECT_EQ(SchedPid(""), std::nullopt);
}

}  // namespace
}  // namespace gpuctl::sys
