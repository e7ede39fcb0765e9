// gpuctld's parts, built from a validated config in the order they depend on
// each other, served, and stopped along the one shutdown path (conventions
// 5); main() only parses flags, takes the state dir's lock, starts this and
// waits for SIGTERM/SIGINT. What the start decides (the guard's plan, job
// cgroups, the build reserve, exit codes) is in agent_startup.h, tested on
// its own.
#pragma once

#include <memory>
#include <optional>

#include "agents/build/build_watch.h"
#include "agents/events/event_log.h"
#include "agents/guard/memory_guard.h"
#include "agents/health/health_sampler.h"
#include "agents/provision/host_probe.h"
#include "agents/provision/job_guarded_build.h"
#include "agents/provision/provisioner.h"
#include "agents/sys/clock.h"
#include "agents/sys/command_runner.h"
#include "agents/sys/gpu_reader.h"
#include "agents/sys/host_fs.h"
#include "agents/sys/process_control.h"
#include "agents/sys/systemd_notify.h"
#include "agents/sys/tmux.h"
#include "agents/train/job_supervisor.h"
#include "common/status.h"
#include "daemon/config/daemon_config.h"
#include "daemon/metrics/guard_metrics.h"
#include "daemon/metrics/metrics_server.h"
#include "daemon/server/agent_server.h"
#include "daemon/server/gpu_faults.h"
#include "daemon/server/guard_setup.h"
#include "daemon/service/agent_service.h"

namespace gpuctl::daemon {

class AgentRuntime {
 public:
  // Builds every part, starts the job supervisor, the build governor, the
  // gRPC server, /metrics and the memory guard, and protects the agent from
  // the OOM killer. Errors refuse the start (exit code: StartExitCode): the
  // guard's plan (PlanGuardIfOn's codes); a server or /metrics that cannot
  // serve (kFailedPrecondition, exit 1). What was started is stopped again
  // when the half-built runtime is destroyed.
  static Result<std::unique_ptr<AgentRuntime>> Start(const DaemonConfig& config);

  enum class Stopped { kClean, kProvisioningStillRunning };
  // The one shutdown path: the guard, /metrics, the build governor, streams,
  // waiting calls, the server (500 ms deadline), the queues, provisioning,
  // the supervisor (jobs keep running in tmux). kProvisioningStillRunning:
  // a provisioning command in flight (dpkg) is left to finish and still uses
  // the parts, so the caller must leave without destroying this (_Exit).
  Stopped Stop();

  AgentRuntime(const AgentRuntime&) = delete;
  AgentRuntime& operator=(const AgentRuntime&) = delete;
  ~AgentRuntime() = default;

 private:
  explicit AgentRuntime(const DaemonConfig& config) : config_(config) {}
  Status StartParts();
  void StartProvisioning();
  void StartBuilds();
  Status StartMetrics();
  void StartGuard();

  // Declared in the order they are built: destroyed in reverse.
  const DaemonConfig config_;
  sys::RealClock clock_;
  std::unique_ptr<events::EventLog> event_log_;
  sys::HostFs host_fs_;
  std::unique_ptr<sys::CommandRunner> runner_;
  std::unique_ptr<sys::GpuReader> gpu_reader_;
  std::unique_ptr<health::HealthSampler> sampler_;
  std::unique_ptr<HealthWatchHub> health_hub_;
  std::unique_ptr<sys::Tmux> tmux_;
  std::unique_ptr<sys::ProcessControl> processes_;
  std::unique_ptr<sys::CgroupDriver> cgroup_driver_;
  sys::CgroupDriver* cgroups_ = nullptr;       // the driver, null when the host has none
  sys::CgroupDriver* job_cgroups_ = nullptr;   // the driver when jobs get cgroups
  std::optional<GuardPlan> guard_plan_;
  std::unique_ptr<train::JobSupervisor> jobs_;
  std::unique_ptr<GpuFaults> gpu_faults_;  // uses jobs_ and sampler_: goes first
  std::unique_ptr<WorkQueue> job_calls_;
  std::unique_ptr<WorkQueue> slow_calls_;
  std::unique_ptr<provision::HostProber> prober_;
  std::unique_ptr<AgentService> agent_service_;
  std::unique_ptr<sys::HostFs> provision_fs_;
  std::unique_ptr<provision::HostProber> provision_prober_;
  std::unique_ptr<provision::JobGuardedBuildRunner> guarded_builds_;
  std::unique_ptr<provision::Provisioner> provisioner_;
  std::unique_ptr<build::BuildWatch> build_watch_;
  std::unique_ptr<AgentServer> server_;
  GuardMetrics guard_metrics_;
  std::unique_ptr<MetricsServer> metrics_server_;
  std::unique_ptr<JobsForGuard> jobs_for_guard_;
  std::unique_ptr<guard::MemoryGuard> memory_guard_;
  std::unique_ptr<sys::WatchdogFeeder> watchdog_feeder_;
};

}  // namespace gpuctl::daemon
