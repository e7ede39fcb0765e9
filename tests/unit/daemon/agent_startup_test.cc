// What gpuctld decides before it serves (daemon/server/agent_startup.h),
// without a server: the exit code of a refused start, the state dir's lock,
// the guard's plan or none, the job supervisor's cgroups, and the one reserve
// both kinds of build leave free.
#include "daemon/server/agent_startup.h"

#include <gtest/gtest.h>

#include "agents/guard/guard_config.h"
#include "agents/sys/process_control.h"
#include "daemon/server/build_setup.h"
#include "tests/fakes/temp_dir.h"
#include "common/units.h"

namespace gpuctl::daemon {
namespace {

using gpuctl::testing::TempDir;

constexpr uint64_t kHostTotal = uint64_t{16384000} * 1024;
constexpr uint64_t kStartupDomain = 2560 * kMiB;

// A 16 GB v2 host with a 2.5 GiB cgroup G.
struct StartupHost {
  TempDir dir;
  sys::HostFs fs{dir.path()};
  std::unique_ptr<sys::ProcessControl> processes = sys::MakeProcessControl(fs);
  std::unique_ptr<sys::CgroupDriver> cgroups;

  StartupHost() {
    dir.WriteFile("proc/meminfo",
                  "MemTotal:       16384000 kB\nMemFree:         8000000 kB\nMemAvailable:   12000000 kB\n"
                  "SwapTotal:             0 kB\nSwapFree:              0 kB\n");
    dir.WriteFile("sys/fs/cgroup/cgroup.controllers", "cpu memory pids\n");
    dir.WriteFile("sys/fs/cgroup/G/memory.max", std::to_string(kStartupDomain) + "\n");
    dir.WriteFile("sys/fs/cgroup/G/memory.current", std::to_string(100 * kMiB) + "\n");
    dir.WriteFile("sys/fs/cgroup/G/memory.stat", "anon 104857600\nactive_file 0\ninactive_file 0\n");
    dir.WriteFile("sys/fs/cgroup/G/cgroup.controllers", "memory\n");
    dir.WriteFile("sys/fs/cgroup/G/cgroup.subtree_control", "memory\n");
    auto made = sys::MakeCgroupDriver(fs, *processes);
    if (made.ok()) cgroups = std::move(made).value();
  }
};

TEST(AgentStartup, TheUsersMistakesExitTwoTheHostsOne) {
  EXPECT_EQ(StartExitCode(InvalidArgument("--guard-reserve")), kExitUsage);
  EXPECT_EQ(StartExitCode(Status(ErrorCode::kAlreadyExists, "held")), kExitUsage);
  EXPECT_EQ(StartExitCode(FailedPrecondition("no cgroups")), kExitStartFailed);
  EXPECT_EQ(StartExitCode(Status(ErrorCode::kPermissionDenied, "denied")), kExitStartFailed);
}

TEST(AgentStartup, OneAgentPerStateDir) {
  TempDir dir;
  const std::string state_dir = dir.path() + "/state/gpuctld";
  Result<sys::PidLock> first = LockStateDir(state_dir);
  ASSERT_TRUE(first.ok()) << first.status().ToString();
  Result<sys::PidLock> second = LockStateDir(state_dir);
  ASSERT_FALSE(second.ok());
  EXPECT_EQ(second.status().code(), ErrorCode::kAlreadyExists);
  EXPECT_NE(second.status().message().find("give this agent a --state-dir of its own"), std::string::npos)
      << second.status().message();
  EXPECT_EQ(StartExitCode(second.status()), kExitUsage);
}

TEST(AgentStartup, AStateDirThatCannotBeMadeIsTheHostsFailure) {
  TempDir dir;
  dir.WriteFile("file", "not a directory\n");
  Result<sys::PidLock> lock = LockStateDir(dir.path() + "/file/state");
  ASSERT_FALSE(lock.ok());
  EXPECT_EQ(StartExitCode(lock.status()), kExitStartFailed) << lock.status().ToString();
  EXPECT_NE(lock.status().message().find("--state-dir"), std::string::npos);
}

TEST(AgentStartup, NoGuardNoPlanAndJobsWithoutCgroups) {
  StartupHost host;
  DaemonConfig config;
  config.guard = false;
  Result<std::optional<GuardPlan>> plan = PlanGuardIfOn(config, host.fs, host.cgroups.get());
  ASSERT_TRUE(plan.ok()) << plan.status().ToString();
  EXPECT_FALSE(plan->has_value());
  train::JobSupervisorOptions jobs = JobOptionsFor(config, *plan, host.cgroups.get(), "/home/u");
  EXPECT_EQ(jobs.cgroups, nullptr);
  EXPECT_FALSE(jobs.default_mem_limit_bytes);
  EXPECT_EQ(jobs.default_cwd, "/home/u");
  EXPECT_EQ(jobs.state_dir, config.state_dir);
}

TEST(AgentStartup, ABadGuardSettingRefusesTheStartAsTheUsers) {
  StartupHost host;
  DaemonConfig config;
  config.guard_reserve = "64G";  // more than the 16 GB host
  Result<std::optional<GuardPlan>> plan = PlanGuardIfOn(config, host.fs, host.cgroups.get());
  ASSERT_FALSE(plan.ok());
  EXPECT_EQ(plan.status().message().rfind("memory guard: ", 0), 0u) << plan.status().message();
  EXPECT_EQ(StartExitCode(plan.status()), kExitUsage);

  config.guard_reserve.clear();
  config.guard_domain = "cgroup:/G";
  plan = PlanGuardIfOn(config, host.fs, /*cgroups=*/nullptr);
  ASSERT_FALSE(plan.ok());
  EXPECT_EQ(StartExitCode(plan.status()), kExitStartFailed) << plan.status().ToString();
}

TEST(AgentStartup, JobsGetTheGuardsCgroupParentAndLimit) {
  StartupHost host;
  ASSERT_NE(host.cgroups, nullptr);
  DaemonConfig config;
  config.guard_domain = "cgroup:/G";
  config.gpu_busy_below = "2G";
  Result<std::optional<GuardPlan>> plan = PlanGuardIfOn(config, host.fs, host.cgroups.get());
  ASSERT_TRUE(plan.ok()) << plan.status().ToString();
  ASSERT_TRUE(plan->has_value());
  ASSERT_FALSE((*plan)->job_cgroup_parent.empty());
  train::JobSupervisorOptions jobs = JobOptionsFor(config, *plan, host.cgroups.get(), "/root");
  EXPECT_EQ(jobs.cgroups, host.cgroups.get());
  EXPECT_EQ(jobs.cgroup_parent, (*plan)->job_cgroup_parent);
  EXPECT_EQ(jobs.default_mem_limit_bytes, (*plan)->default_job_limit_bytes);
  EXPECT_EQ(jobs.gpu_busy_below_bytes, uint64_t{2} << 30);
  config.gpu_busy_below = "lots";
  EXPECT_EQ(JobOptionsFor(config, *plan, host.cgroups.get(), "/root").gpu_busy_below_bytes, uint64_t{1} << 30);
}

// The reserve an extension build leaves free is the one a `gpuctl build`
// job leaves, and the guard's kill line: guard::BudgetOf over its domain.
TEST(AgentStartup, ProvisioningLeavesTheGuardsOwnReserve) {
  StartupHost host;
  DaemonConfig config;
  config.guard_domain = "cgroup:/G";
  config.provision_root = "/mnt/root";
  Result<std::optional<GuardPlan>> plan = PlanGuardIfOn(config, host.fs, host.cgroups.get());
  ASSERT_TRUE(plan.ok() && plan->has_value()) << plan.status().ToString();
  provision::ProvisionConfig provision = ProvisionConfigFor(config, *plan, host.fs, host.cgroups.get());
  EXPECT_EQ(provision.guard_reserve_bytes, guard::ReserveBytes((*plan)->config, kStartupDomain));
  EXPECT_EQ(provision.guard_reserve_bytes, BuildMemoryFacts(host.fs, *plan, host.cgroups.get()).reserve_bytes);
  EXPECT_EQ(provision.system_root, "/mnt/root");
  EXPECT_EQ(provision.state_dir, config.state_dir);

  config.guard_reserve = "300M";
  plan = PlanGuardIfOn(config, host.fs, host.cgroups.get());
  ASSERT_TRUE(plan.ok() && plan->has_value()) << plan.status().ToString();
  EXPECT_EQ(ProvisionConfigFor(config, *plan, host.fs, host.cgroups.get()).guard_reserve_bytes, 300 * kMiB);

  // No guard: the host's memory and the default reserve, so sshd keeps room.
  EXPECT_EQ(ProvisionConfigFor(config, std::nullopt, host.fs, host.cgroups.get()).guard_reserve_bytes,
            guard::DefaultReserveBytes(kHostTotal));
}

}  // namespace
}  // namespace gpuctl::daemon
