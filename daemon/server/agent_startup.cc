#include "daemon/server/agent_startup.h"

#include "agents/sys/environment.h"
#include "agents/sys/files.h"
#include "agents/sys/proc_stat.h"
#include "common/units.h"
#include "daemon/server/build_setup.h"

namespace gpuctl::daemon {

int StartExitCode(const Status& status) {
  const ErrorCode code = status.code();
  return code == ErrorCode::kInvalidArgument || code == ErrorCode::kAlreadyExists ? kExitUsage : kExitStartFailed;
}

Result<sys::PidLock> LockStateDir(const std::string& state_dir) {
  if (Status s = sys::EnsureDir(state_dir, 0700); !s.ok()) {
    // The host's failure (exit 1), whatever the code: --state-dir itself was given.
    return FailedPrecondition("cannot use --state-dir: " + s.message());
  }
  // Held until exit; the kernel drops it if the agent dies.
  Result<sys::PidLock> lock = sys::PidLock::Acquire(state_dir + "/gpuctld.lock");
  if (lock.ok()) return lock;
  if (lock.status().code() == ErrorCode::kAlreadyExists) {
    return Status(ErrorCode::kAlreadyExists, "another gpuctld is already serving from --state-dir " + state_dir + " (" +
                                                 lock.status().message() +
                                                 "); stop it first, or give this agent a --state-dir of its own");
  }
  return FailedPrecondition("cannot lock --state-dir " + state_dir + ": " + lock.status().message());
}

Result<std::optional<GuardPlan>> PlanGuardIfOn(const DaemonConfig& config, const sys::HostFs& fs,
                                               sys::CgroupDriver* cgroups) {
  if (!config.guard) return std::optional<GuardPlan>();
  Result<GuardPlan> plan = PlanGuard(config, fs, cgroups);
  if (!plan.ok()) return Status(plan.status().code(), "memory guard: " + plan.status().message());
  return std::optional<GuardPlan>(std::move(plan).value());
}

train::JobSupervisorOptions JobOptionsFor(const DaemonConfig& config, const std::optional<GuardPlan>& guard,
                                          sys::CgroupDriver* cgroups, std::string home) {
  train::JobSupervisorOptions options;
  options.state_dir = config.state_dir;
  options.lxc_rootfs_template = config.lxc_rootfs;
  options.pct = config.pct;
  options.tmux_socket = config.tmux_socket;
  options.default_cwd = std::move(home);
  if (guard && !guard->job_cgroup_parent.empty()) {
    options.cgroups = cgroups;
    options.cgroup_parent = guard->job_cgroup_parent;
    options.default_mem_limit_bytes = guard->default_job_limit_bytes;
  }
  options.gpu_busy_below_bytes = ParseByteSize(config.gpu_busy_below).value_or(uint64_t{1} << 30);
  // py-spy for hang dumps: the job's venv first, then the agent's PATH.
  options.agent_path = sys::EnvironmentVariable("PATH").value_or("/usr/local/bin:/usr/bin:/bin");
  options.hang.ticks_per_second = sys::ClockTicksPerSecond();
  return options;
}

provision::ProvisionConfig ProvisionConfigFor(const DaemonConfig& config, const std::optional<GuardPlan>& guard,
                                              const sys::HostFs& fs, sys::CgroupDriver* cgroups) {
  provision::ProvisionConfig provision;
  provision.state_dir = config.state_dir;
  provision.system_root = config.provision_root;
  provision.lxc_rootfs_template = config.lxc_rootfs;
  provision.pct = config.pct;
  provision.guard_reserve_bytes = BuildMemoryFacts(fs, guard, cgroups).reserve_bytes;
  return provision;
}

}  // namespace gpuctl::daemon
