// Issue 24: on one machine `health` said "in docker" and `probe` said "host".
// Health, probe and provisioning now ask one detector; on each fixture tree
// their wire answers are equal, provisioning's plan choice follows them, and a
// container's driver plan has no kernel module or headers.
#include <gtest/gtest.h>

#include <algorithm>
#include <functional>

#include "agents/health/host_sampler.h"
#include "agents/provision/driver_plan.h"
#include "agents/provision/host_probe.h"
#include "agents/provision/plan_facts.h"
#include "daemon/service/health_convert.h"
#include "daemon/service/probe_convert.h"
#include "tests/fakes/fake_command_runner.h"
#include "tests/fakes/temp_dir.h"
#include "tests/fakes/where_running_trees.h"

namespace gpuctl::daemon {
namespace {

using gpuctl::testing::TempDir;

struct WhereTree {
  const char* name;
  std::function<void(const TempDir&)> write;
  v1::WhereKind want;
};

const WhereTree kTrees[] = {
    {"docker v1", testing::WriteDockerV1Tree, v1::WHERE_KIND_DOCKER},
    {"docker v2 in a VM", testing::WriteDockerV2InVmTree, v1::WHERE_KIND_DOCKER},
    {"lxc guest v2", testing::WriteLxcGuestV2Tree, v1::WHERE_KIND_LXC},
    {"lxc guest v1", testing::WriteLxcGuestV1Tree, v1::WHERE_KIND_LXC},
    {"vm with a stale /.dockerenv", testing::WriteVmWithStaleDockerenvTree, v1::WHERE_KIND_VM},
    {"kvm vm v2", testing::WriteKvmVmV2Tree, v1::WHERE_KIND_VM},
    {"bare metal", testing::WriteBareMetalTree, v1::WHERE_KIND_BARE_METAL},
};

// What health and the probe also need, beside the detector's files: an
// Ubuntu 24.04 without kernel headers, with NVIDIA's open module 580 loaded.
void WriteCommonFiles(const TempDir& dir) {
  dir.WriteFile("etc/os-release", "PRETTY_NAME=\"Ubuntu 24.04.2 LTS\"\nID=ubuntu\nVERSION_ID=\"24.04\"\n");
  dir.WriteFile("proc/sys/kernel/osrelease", "6.8.0-60-generic\n");
  dir.WriteFile("proc/meminfo", "MemTotal: 131899444 kB\nMemFree: 1000 kB\nMemAvailable: 125000000 kB\n");
  dir.WriteFile("proc/self/status", "Cpus_allowed_list:\t0-15\n");
  dir.WriteFile("proc/driver/nvidia/version",
                "NVRM version: NVIDIA UNIX Open Kernel Module for x86_64  580.95.05  Release Build  "
                "(dvs-builder@U22-I3-AF03-09-1)  Thu Nov 13 19:24:51 UTC 2025\n");
}

struct Answers {
  v1::WhereRunning health;
  v1::WhereRunning probe;
  v1::ContainerKind health_container = v1::CONTAINER_KIND_UNSPECIFIED;
  bool probe_lxc_guest = false;
  provision::PlanFacts facts;
};

Answers AskEveryone(const TempDir& dir) {
  sys::HostFs fs(dir.path());
  Answers out;
  health::HostSampler sampler(fs);
  Result<health::HostHealth> host = sampler.Sample();
  EXPECT_TRUE(host.ok()) << host.status().ToString();
  health::HealthSnapshot snapshot;
  snapshot.host = host.value_or({});
  v1::HealthSnapshot health;
  ToProto(snapshot, health);
  out.health = health.host().where();
  out.health_container = health.host().container();

  testing::FakeCommandRunner runner;
  provision::HostProber prober(fs, runner);
  provision::HostProbe probe = prober.Probe({});
  v1::HostProbe wire;
  ToProto(probe, wire);
  out.probe = wire.where();
  out.probe_lxc_guest = wire.lxc_guest();
  out.facts = provision::FactsFromProbe(probe);
  return out;
}

std::vector<std::string> ActionLines(const provision::DriverPlan& plan) {
  std::vector<std::string> lines;
  for (const provision::StepAction& action : plan.actions) {
    std::string line = action.argv.empty() ? "write " + action.write_path : "";
    for (const std::string& arg : action.argv) line += (line.empty() ? "" : " ") + arg;
    lines.push_back(line);
  }
  return lines;
}

TEST(WhereRunningAgreement, HealthProbeAndProvisioningGiveOneAnswerPerTree) {
  for (const WhereTree& tree : kTrees) {
    SCOPED_TRACE(tree.name);
    TempDir dir;
    WriteCommonFiles(dir);
    tree.write(dir);
    Answers a = AskEveryone(dir);
    EXPECT_EQ(a.health.kind(), tree.want);
    EXPECT_EQ(a.health.SerializeAsString(), a.probe.SerializeAsString())
        << "health: " << a.health.ShortDebugString() << "\nprobe:  " << a.probe.ShortDebugString();
    EXPECT_FALSE(a.health.evidence().empty());
    const bool container = tree.want != v1::WHERE_KIND_VM && tree.want != v1::WHERE_KIND_BARE_METAL;
    EXPECT_EQ(provision::PlansAsGuest(a.facts), container);
    // The older fields say the same.
    EXPECT_EQ(a.probe_lxc_guest, tree.want == v1::WHERE_KIND_LXC);
    EXPECT_EQ(a.health_container == v1::CONTAINER_KIND_NONE, !container);
  }
}

TEST(WhereRunningAgreement, AContainersDriverPlanHasNoKernelModuleOrHeaders) {
  for (const WhereTree& tree : kTrees) {
    if (tree.want == v1::WHERE_KIND_VM || tree.want == v1::WHERE_KIND_BARE_METAL) continue;
    SCOPED_TRACE(tree.name);
    TempDir dir;
    WriteCommonFiles(dir);
    tree.write(dir);
    provision::PlanFacts facts = AskEveryone(dir).facts;
    ASSERT_TRUE(provision::PlansAsGuest(facts));
    Result<provision::DriverPlan> plan = provision::PlanGuestDriver(facts, {});
    ASSERT_TRUE(plan.ok()) << plan.status().ToString();
    ASSERT_FALSE(plan->actions.empty());
    for (const std::string& line : ActionLines(*plan)) {
      EXPECT_EQ(line.find("headers"), std::string::npos) << line;
      EXPECT_EQ(line.find("dkms"), std::string::npos) << line;
      EXPECT_EQ(line.find("nvidia-open"), std::string::npos) << line;
      EXPECT_EQ(line.find("modprobe"), std::string::npos) << line;
    }
  }
}

// The machine of issue 24 used to get... whichever plan the probe's LXC-only
// check chose; as a VM it gets the host's, kernel headers first.
TEST(WhereRunningAgreement, AVmWithAStaleDockerenvGetsTheHostPlanWithHeaders) {
  TempDir dir;
  WriteCommonFiles(dir);
  testing::WriteVmWithStaleDockerenvTree(dir);
  provision::PlanFacts facts = AskEveryone(dir).facts;
  EXPECT_FALSE(provision::PlansAsGuest(facts));
  facts.compute_capabilities = {"9.0"};  // an H200; the fake runner lists no PCI devices
  facts.driver_library_version = "580.95.05";
  facts.kernel_module_version = std::nullopt;  // nothing loaded yet: the host plan installs it
  Result<provision::DriverPlan> plan = provision::PlanHostDriver(facts, {}, {});
  ASSERT_TRUE(plan.ok()) << plan.status().ToString();
  std::vector<std::string> lines = ActionLines(*plan);
  EXPECT_TRUE(std::find(lines.begin(), lines.end(), "apt-get install -y linux-headers-6.8.0-60-generic") != lines.end())
      << ::testing::PrintToString(lines);
}

}  // namespace
}  // namespace gpuctl::daemon
