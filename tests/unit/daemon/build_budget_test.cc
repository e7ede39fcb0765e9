// A build's budget comes from the domain the guard watches and the guard's
// reserve (guard::BudgetOf), not from the host's memory: with the guard on a
// 2.5 GiB cgroup of a 16 GB host, a build gets what that cgroup has left
// less the guard's reserve. v1 and v2 fixture trees.
#include <gtest/gtest.h>

#include "agents/build/build_spec.h"
#include "agents/guard/decide.h"
#include "agents/sys/cgroup_driver.h"
#include "agents/sys/host_fs.h"
#include "agents/sys/process_control.h"
#include "daemon/server/agent_startup.h"
#include "daemon/server/build_setup.h"
#include "tests/fakes/temp_dir.h"
#include "common/units.h"

namespace gpuctl::daemon {
namespace {

using gpuctl::testing::TempDir;

constexpr uint64_t kDomain = 2560 * kMiB;  // 2.5 GiB
constexpr uint64_t kUsed = 100 * kMiB;

struct BudgetHost {
  TempDir dir;
  sys::HostFs fs{dir.path()};
  std::unique_ptr<sys::ProcessControl> processes = sys::MakeProcessControl(fs);
  std::unique_ptr<sys::CgroupDriver> cgroups;

  explicit BudgetHost(bool v2) {
    dir.WriteFile("proc/meminfo",
                  "MemTotal:       16384000 kB\nMemFree:         8000000 kB\nMemAvailable:   12000000 kB\n"
                  "SwapTotal:             0 kB\nSwapFree:              0 kB\n");
    if (v2) {
      const std::string g = "sys/fs/cgroup/G/";
      dir.WriteFile("sys/fs/cgroup/cgroup.controllers", "cpu memory pids\n");
      dir.WriteFile(g + "memory.max", std::to_string(kDomain) + "\n");
      dir.WriteFile(g + "memory.current", std::to_string(kUsed) + "\n");
      dir.WriteFile(g + "memory.stat", "anon 104857600\nactive_file 0\ninactive_file 0\nfile_dirty 0\n"
                                       "file_writeback 0\n");
      dir.WriteFile(g + "cgroup.controllers", "memory\n");
      dir.WriteFile(g + "cgroup.subtree_control", "memory\n");
    } else {
      const std::string g = "sys/fs/cgroup/memory/G/";
      dir.WriteFile("sys/fs/cgroup/memory/memory.limit_in_bytes", "9223372036854771712\n");
      dir.WriteFile(g + "memory.limit_in_bytes", std::to_string(kDomain) + "\n");
      dir.WriteFile(g + "memory.usage_in_bytes", std::to_string(kUsed) + "\n");
      dir.WriteFile(g + "memory.stat", "total_active_file 0\ntotal_inactive_file 0\ntotal_dirty 0\n"
                                       "total_writeback 0\n");
    }
    auto made = sys::MakeCgroupDriver(fs, *processes);
    if (made.ok()) cgroups = std::move(made).value();
  }
};

void ExpectTheDomainsBudget(bool v2) {
  BudgetHost host(v2);
  ASSERT_NE(host.cgroups, nullptr);
  DaemonConfig config;
  config.guard_domain = "cgroup:/G";
  Result<GuardPlan> plan = PlanGuard(config, host.fs, host.cgroups.get());
  ASSERT_TRUE(plan.ok()) << plan.status().ToString();

  build::BuildHostFacts facts = BuildMemoryFacts(host.fs, *plan, host.cgroups.get());
  const uint64_t reserve = guard::ReserveBytes(plan->config, kDomain);
  EXPECT_EQ(reserve, kDomain / 8) << "the default reserve, at most an eighth of a small domain";
  EXPECT_EQ(facts.domain_total_bytes, kDomain);
  EXPECT_EQ(facts.available_bytes, kDomain - kUsed) << "the domain's, not the host's 11.4 GiB";
  EXPECT_EQ(facts.reserve_bytes, reserve);
  facts.cpus = 8;
  Result<build::PreparedBuild> build = build::PrepareBuild(std::nullopt, 0, {}, facts);
  ASSERT_TRUE(build.ok()) << build.status().ToString();
  EXPECT_EQ(build->budget_bytes, kDomain - kUsed - reserve);

  // The guard's kill line is the same reserve: a build that stays inside its
  // budget leaves the domain at or above it.
  guard::DomainReading full_build{kDomain, kDomain - kUsed - build->budget_bytes, std::nullopt, std::nullopt};
  EXPECT_NE(guard::Decide(full_build, plan->config).action, guard::GuardAction::kKill);
  full_build.available_bytes -= kMiB;
  EXPECT_EQ(guard::Decide(full_build, plan->config).action, guard::GuardAction::kKill);
}

TEST(BuildBudget, ComesFromTheGuardsV1CgroupDomain) { ExpectTheDomainsBudget(/*v2=*/false); }
TEST(BuildBudget, ComesFromTheGuardsV2CgroupDomain) { ExpectTheDomainsBudget(/*v2=*/true); }

TEST(BuildBudget, WithoutAGuardItIsTheHostLessTheDefaultReserve) {
  BudgetHost host(/*v2=*/false);
  build::BuildHostFacts facts = BuildMemoryFacts(host.fs, std::nullopt, host.cgroups.get());
  EXPECT_EQ(facts.available_bytes, uint64_t{12000000} * 1024);
  EXPECT_EQ(facts.reserve_bytes, guard::DefaultReserveBytes(uint64_t{16384000} * 1024));
}

// A file of a cgroup is not a cgroup: the guard would read nothing there.
TEST(BuildBudget, AGuardDomainThatIsAFileIsRefused) {
  BudgetHost host(/*v2=*/false);
  DaemonConfig config;
  config.guard_domain = "cgroup:/G/memory.limit_in_bytes";
  Result<GuardPlan> plan = PlanGuard(config, host.fs, host.cgroups.get());
  EXPECT_EQ(plan.status().code(), ErrorCode::kInvalidArgument) << plan.status().ToString();
}

// A build is a cgroup whose limit is its budget, governed inside it. An
// agent whose jobs get no cgroup refuses builds and says why; before, it ran
// them unbounded and ungoverned and reported "0 compiles, 0 pauses".
TEST(BuildRefusal, AnAgentWhoseJobsGetNoCgroupRefusesBuildsSayingWhy) {
  Status off = BuildsCanBeGoverned(std::nullopt, nullptr);
  EXPECT_EQ(off.code(), ErrorCode::kFailedPrecondition);
  EXPECT_NE(off.message().find("--guard off"), std::string::npos) << off.message();

  // The guard on, but a file stands where the job cgroup goes: jobs run
  // without cgroups, and builds are refused with the reason.
  BudgetHost host(/*v2=*/false);
  ASSERT_NE(host.cgroups, nullptr);
  host.dir.WriteFile("sys/fs/cgroup/memory/gpuctl", "not a cgroup\n");
  DaemonConfig config;
  Result<GuardPlan> plan = PlanGuard(config, host.fs, host.cgroups.get());
  ASSERT_TRUE(plan.ok()) << plan.status().ToString();
  EXPECT_EQ(plan->job_cgroup_parent, "");
  train::JobSupervisorOptions jobs = JobOptionsFor(config, *plan, host.cgroups.get(), "/root");
  EXPECT_EQ(jobs.cgroups, nullptr);
  Status refused = BuildsCanBeGoverned(*plan, jobs.cgroups);
  EXPECT_EQ(refused.code(), ErrorCode::kFailedPrecondition);
  EXPECT_NE(refused.message().find("could not create the job cgroup /gpuctl"), std::string::npos)
      << refused.message();

  // Where the job cgroups could be made, builds go ahead.
  BudgetHost usable(/*v2=*/false);
  Result<GuardPlan> made = PlanGuard(config, usable.fs, usable.cgroups.get());
  ASSERT_TRUE(made.ok()) << made.status().ToString();
  EXPECT_EQ(made->job_cgroup_parent, "/gpuctl");
  train::JobSupervisorOptions governed = JobOptionsFor(config, *made, usable.cgroups.get(), "/root");
  EXPECT_TRUE(BuildsCanBeGoverned(*made, governed.cgroups).ok());
}

}  // namespace
}  // namespace gpuctl::daemon
