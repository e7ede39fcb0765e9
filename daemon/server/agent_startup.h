// What gpuctld decides before it serves, apart from main() so that a test can
// call it with a temp state dir and fake hosts: the exit code a refused start
// gets, the state dir's lock, whether and how the memory guard runs, and the
// options the job supervisor and provisioning are built with. Nothing here
// starts a thread or a server.
#pragma once

#include <optional>
#include <string>

#include "agents/provision/provision_options.h"
#include "agents/sys/cgroup_driver.h"
#include "agents/sys/host_fs.h"
#include "agents/sys/pid_lock.h"
#include "agents/train/job_supervisor.h"
#include "common/status.h"
#include "daemon/config/daemon_config.h"
#include "daemon/server/guard_setup.h"

namespace gpuctl::daemon {

inline constexpr int kExitStartFailed = 1;
inline constexpr int kExitUsage = 2;

// The exit code of a start refused with `status`: 2 for what the user can fix
// in the command line or config (kInvalidArgument; kAlreadyExists, a state
// dir another agent serves from), 1 for the host's failures.
int StartExitCode(const Status& status);

// Creates STATE_DIR (0700) and takes STATE_DIR/gpuctld.lock, held until the
// returned lock is destroyed: one agent per state dir, as two would both
// rewrite job records and append to one event journal. Errors:
// kAlreadyExists when another agent holds it (saying to stop it or to give
// this one a --state-dir of its own); kFailedPrecondition when the directory
// cannot be made or the lock taken.
Result<sys::PidLock> LockStateDir(const std::string& state_dir);

// The memory guard's plan when --guard is on, nullopt when it is off.
// Errors: PlanGuard's, which refuse the start.
Result<std::optional<GuardPlan>> PlanGuardIfOn(const DaemonConfig& config, const sys::HostFs& fs,
                                               sys::CgroupDriver* cgroups);

// The job supervisor's options from the config: state, LXC and tmux
// settings, `home` as the default cwd, the GPU-busy line; job cgroups (and
// their default limit) only when the guard has a job cgroup parent. The
// publish and read_gpus hooks are left for the caller to set.
train::JobSupervisorOptions JobOptionsFor(const DaemonConfig& config, const std::optional<GuardPlan>& guard,
                                          sys::CgroupDriver* cgroups, std::string home);

// Provisioning's config from the daemon's, with the guard's reserve an
// extension build leaves free: the one `gpuctl build` leaves
// (BuildMemoryFacts, guard::BudgetOf over the guard's domain; the host's
// default reserve without a guard, so sshd keeps room even then).
provision::ProvisionConfig ProvisionConfigFor(const DaemonConfig& config, const std::optional<GuardPlan>& guard,
                                              const sys::HostFs& fs, sys::CgroupDriver* cgroups);

}  // namespace gpuctl::daemon
