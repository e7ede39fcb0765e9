// Builds the memory guard from the daemon's config, checking everything a
// user can get wrong at start (a reserve larger than RAM, an unknown domain
// cgroup, a job cgroup that cannot be created) instead of at kill time.
#pragma once

#include <chrono>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <optional>

#include "agents/guard/memory_guard.h"
#include "agents/sys/cgroup_driver.h"
#include "agents/sys/clock.h"
#include "agents/sys/host_fs.h"
#include "agents/train/job_supervisor.h"
#include "common/status.h"
#include "daemon/config/daemon_config.h"

namespace gpuctl::daemon {

struct GuardPlan {
  guard::GuardConfig config;
  uint64_t domain_total_bytes = 0;
  // For the job supervisor: where job cgroups go and their default limit.
  // cgroup_parent empty: jobs run without cgroups (none could be made).
  std::string job_cgroup_parent;
  // Why job_cgroup_parent is empty (the cgroup could not be made), for the
  // builds refused without one (BuildsCanBeGoverned).
  std::string no_job_cgroups_why;
  uint64_t default_job_limit_bytes = 0;
};

// Errors are the user's (kInvalidArgument, exit 2) or the host's
// (kFailedPrecondition): both refuse the start with a message.
Result<GuardPlan> PlanGuard(const DaemonConfig& config, const sys::HostFs& fs, sys::CgroupDriver* cgroups);

// The job supervisor as the guard sees it. A kill is marked on the run the
// guard weighed (the run id it saw in Running()), never on a later run of
// the same name.
class JobsForGuard final : public guard::GuardedWork {
 public:
  // `relieve`: the build governor's relief for a build's run id (see
  // BuildWatch::Relieve); empty without a governor.
  explicit JobsForGuard(train::JobSupervisor& jobs, std::function<bool(const std::string& run_id)> relieve = {})
      : jobs_(jobs), relieve_(std::move(relieve)) {}
  std::vector<guard::GuardedWorkItem> Running() override;
  void WillKill(const std::string& name, const std::string& reason) override;
  bool Relieve(const std::string& name) override;

 private:
  train::JobSupervisor& jobs_;
  std::function<bool(const std::string& run_id)> relieve_;
  std::mutex mutex_;
  std::map<std::string, std::string> run_ids_;  // name -> run id, as of the last Running()
};

// The guard loop's heartbeat: calls `notify` (sys::NotifyWatchdog) at most
// once every half `interval` (sys::WatchdogInterval), so that a hung guard
// loop gets the agent restarted by systemd. Does nothing without an interval.
std::function<void()> WatchdogHeartbeat(const sys::Clock& clock, std::optional<std::chrono::microseconds> interval,
                                        std::function<void()> notify);

// The kernel event the guard wakes on: a PSI trigger for the host or a v2
// cgroup, a usage threshold for a v1 cgroup. Null when the kernel offers none
// (the guard then polls).
std::unique_ptr<sys::MemoryPressureWaiter> MakePressureWaiter(const GuardPlan& plan, const sys::HostFs& fs,
                                                              sys::CgroupDriver* cgroups);

}  // namespace gpuctl::daemon
