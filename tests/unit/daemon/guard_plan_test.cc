// PlanGuard against fixture trees of a v1 and a v2 host: a cgroup domain is
// found whether it is given under the hierarchy or as its directory.
#include "daemon/server/guard_setup.h"

#include <gtest/gtest.h>

#include "agents/sys/cgroup_driver.h"
#include "agents/sys/host_fs.h"
#include "agents/sys/process_control.h"
#include "tests/fakes/temp_dir.h"

namespace gpuctl::daemon {
namespace {

using gpuctl::testing::TempDir;

constexpr const char* kMeminfo =
    "MemTotal:       16384000 kB\nMemFree:         8000000 kB\nMemAvailable:   12000000 kB\n"
    "SwapTotal:             0 kB\nSwapFree:              0 kB\n";

struct PlanHost {
  TempDir dir;
  sys::HostFs fs{dir.path()};
  std::unique_ptr<sys::ProcessControl> processes = sys::MakeProcessControl(fs);
  std::unique_ptr<sys::CgroupDriver> cgroups;

  explicit PlanHost(bool v2) {
    dir.WriteFile("proc/meminfo", kMeminfo);
    if (v2) {
      dir.WriteFile("sys/fs/cgroup/cgroup.controllers", "cpu memory pids\n");
      dir.WriteFile("sys/fs/cgroup/lxc.payload.200/memory.max", "4294967296\n");
      dir.WriteFile("sys/fs/cgroup/lxc.payload.200/cgroup.controllers", "memory\n");
      dir.WriteFile("sys/fs/cgroup/lxc.payload.200/cgroup.subtree_control", "memory\n");
    } else {
      dir.WriteFile("sys/fs/cgroup/memory/memory.limit_in_bytes", "9223372036854771712\n");
      dir.WriteFile("sys/fs/cgroup/memory/lxc/c1/memory.limit_in_bytes", "4294967296\n");
    }
    auto made = sys::MakeCgroupDriver(fs, *processes);
    if (made.ok()) cgroups = std::move(made).value();
  }
};

DaemonConfig CgroupDomain(const std::string& domain) {
  DaemonConfig config;
  config.guard_domain = domain;
  return config;
}

TEST(GuardPlanTest, V1DomainByPathUnderTheHierarchyOrByDirectory) {
  PlanHost host(/*v2=*/false);
  ASSERT_NE(host.cgroups, nullptr);
  for (const char* domain : {"cgroup:/lxc/c1", "cgroup:/sys/fs/cgroup/memory/lxc/c1"}) {
    Result<GuardPlan> plan = PlanGuard(CgroupDomain(domain), host.fs, host.cgroups.get());
    ASSERT_TRUE(plan.ok()) << domain << ": " << plan.status().ToString();
    EXPECT_EQ(plan->config.domain.cgroup, "/lxc/c1") << domain;
    EXPECT_EQ(plan->domain_total_bytes, uint64_t{4} << 30) << domain;
  }
  Result<GuardPlan> missing = PlanGuard(CgroupDomain("cgroup:/sys/fs/cgroup/memory/lxc/nope"), host.fs,
                                        host.cgroups.get());
  EXPECT_EQ(missing.status().code(), ErrorCode::kInvalidArgument);
  EXPECT_NE(missing.status().message().find("no such cgroup"), std::string::npos);
}

TEST(GuardPlanTest, V2DomainByDirectory) {
  PlanHost host(/*v2=*/true);
  ASSERT_NE(host.cgroups, nullptr);
  Result<GuardPlan> plan =
      PlanGuard(CgroupDomain("cgroup:/sys/fs/cgroup/lxc.payload.200"), host.fs, host.cgroups.get());
  ASSERT_TRUE(plan.ok()) << plan.status().ToString();
  EXPECT_EQ(plan->config.domain.cgroup, "/lxc.payload.200");
  EXPECT_EQ(plan->domain_total_bytes, uint64_t{4} << 30);
}

}  // namespace
}  // namespace gpuctl::daemon
