// gpuctld's composition root: parse flags, build the parts, serve, and shut
// down on SIGTERM/SIGINT. Logic lives in the libraries, not here.
#include <cstdio>
#include <cstdlib>
#include <iostream>

#include <spdlog/sinks/stdout_color_sinks.h>
#include <spdlog/sinks/stdout_sinks.h>
#include <spdlog/spdlog.h>

#include "agents/events/event_log.h"
#include "agents/health/health_sampler.h"
#include "agents/provision/job_guarded_build.h"
#include "agents/provision/plan_facts.h"
#include "agents/provision/provisioner.h"
#include "agents/sys/clock.h"
#include "agents/sys/command_runner.h"
#include "agents/sys/files.h"
#include "agents/sys/gpu_reader.h"
#include "common/units.h"
#include "agents/sys/host_fs.h"
#include "agents/sys/process_control.h"
#include "agents/sys/self_protection.h"
#include "agents/sys/shutdown_signal.h"
#include "agents/sys/systemd_notify.h"
#include "agents/sys/terminal.h"
#include "agents/sys/tmux.h"
#include "agents/sys/unix_bridge.h"
#include "agents/train/job_supervisor.h"
#include "daemon/config/flags.h"
#include "daemon/metrics/agent_metrics.h"
#include "daemon/metrics/guard_metrics.h"
#include "daemon/server/agent_server.h"
#include "daemon/server/agent_startup.h"
#include "daemon/server/build_setup.h"
#include "daemon/server/guard_setup.h"
#include "daemon/service/agent_service.h"
#include "daemon/service/probe_convert.h"

namespace {

using gpuctl::daemon::kExitStartFailed;
using gpuctl::daemon::kExitUsage;

void SetUpLogging(const std::string& level) {
  // Colours only for a person at a terminal; journald and files get plain text.
  const bool terminal = gpuctl::sys::StderrIsTerminal();
  auto logger = terminal ? spdlog::stderr_color_mt("gpuctld") : spdlog::stderr_logger_mt("gpuctld");
  if (!terminal) logger->set_pattern("%Y-%m-%dT%H:%M:%S.%e %l %v");
  spdlog::set_default_logger(logger);
  spdlog::set_level(spdlog::level::from_str(level));
}

}  // namespace

int main(int argc, char** argv) {
  using namespace gpuctl;
  // gpuctld --bridge SOCKET: the client's way to the agent over an SSH exec
  // channel (see unix_bridge.h). Not the agent itself: nothing else starts.
  if (argc == 3 && std::string_view(argv[1]) == "--bridge") {
    Status s = sys::BridgeUnixSocketToStdio(argv[2]);
    if (!s.ok()) std::cerr << "gpuctld --bridge: " << s.message() << "\n";
    return s.ok() ? 0 : kExitStartFailed;
  }
  // Before any thread exists, so all inherit the mask (see shutdown_signal.h).
  sys::BlockShutdownSignals();

  Result<daemon::FlagsOutcome> flags = daemon::ParseDaemonFlags(argc, argv);
  if (!flags.ok()) {
    std::cerr << "gpuctld: " << flags.status().message() << "\n";
    return kExitUsage;
  }
  if (!flags->print_and_exit.empty()) {
    std::cout << flags->print_and_exit;
    return 0;
  }
  const daemon::DaemonConfig& config = flags->config;
  SetUpLogging(config.log_level);

  // One agent per state directory, held until exit.
  Result<sys::PidLock> state_lock = daemon::LockStateDir(config.state_dir);
  if (!state_lock.ok()) {
    spdlog::error("{}", state_lock.status().message());
    return daemon::StartExitCode(state_lock.status());
  }

  sys::RealClock clock;
  // Early, so every part built below can publish to it. Kept on disk, so
  // events and their seq survive restarts.
  Result<std::unique_ptr<events::EventJournal>> journal = events::EventJournal::Open(config.state_dir + "/events");
  if (!journal.ok()) spdlog::warn("events are kept in memory only: {}", journal.status().message());
  events::EventLog event_log(clock, events::EventLog::kDefaultCapacity,
                             journal.ok() ? std::move(journal).value() : nullptr);
  sys::HostFs host_fs;
  std::unique_ptr<sys::CommandRunner> runner = sys::MakeSubprocessRunner();
  std::unique_ptr<sys::GpuReader> gpu_reader =
      sys::MakeGpuReader({.nvml_library = config.nvml_library, .nvidia_smi = config.nvidia_smi}, *runner);
  health::HealthSampler sampler(host_fs, *gpu_reader, clock,
                                std::chrono::milliseconds(config.gpu_max_age_ms));
  daemon::HealthWatchHub health_hub([&] { return daemon::SampleHealthProto(sampler); }, clock);
  std::unique_ptr<sys::Tmux> tmux = sys::MakeTmux(*runner, config.tmux_socket);
  std::unique_ptr<sys::ProcessControl> processes = sys::MakeProcessControl(host_fs);

  // The guard's plan is checked before anything starts: bad settings refuse
  // the start instead of surfacing at kill time.
  Result<std::unique_ptr<sys::CgroupDriver>> cgroup_driver = sys::MakeCgroupDriver(host_fs, *processes);
  sys::CgroupDriver* cgroups = cgroup_driver.ok() ? cgroup_driver->get() : nullptr;
  Result<std::optional<daemon::GuardPlan>> planned_guard = daemon::PlanGuardIfOn(config, host_fs, cgroups);
  if (!planned_guard.ok()) {
    spdlog::error("{}", planned_guard.status().message());
    return daemon::StartExitCode(planned_guard.status());
  }
  const std::optional<daemon::GuardPlan> guard_plan = std::move(planned_guard).value();
  train::JobSupervisorOptions job_options = daemon::JobOptionsFor(config, guard_plan, cgroups, sys::HomeDirectory());
  job_options.publish = [&event_log](std::string kind, std::string job, std::string message, nlohmann::json fields) {
    event_log.Publish({.kind = std::move(kind), .job = std::move(job), .message = std::move(message),
                       .fields = std::move(fields)});
  };
  // Each job's GPU memory from the health sampler's (cached) GPU reading.
  job_options.read_gpus = [&sampler] {
    Result<health::HealthSnapshot> snapshot = sampler.Sample();
    return snapshot.ok() ? snapshot->gpus : sys::GpuReport{};
  };
  train::JobSupervisor jobs(job_options, *tmux, *processes, *runner, clock);
  jobs.Start();
  daemon::WorkQueue job_calls(/*workers=*/4, /*max_queued=*/64);
  daemon::WorkQueue slow_calls(/*workers=*/2, /*max_queued=*/32);
  provision::HostProber prober(host_fs, *runner, daemon::DefaultProbeOptions());
  daemon::AgentService agent_service(sampler, health_hub, jobs, job_calls, slow_calls, event_log, prober,
                                     static_cast<size_t>(config.max_log_streams));

  // Provisioning: facts from a probe under --provision-root (without venv
  // imports: the steps ask the venv themselves), extension builds as jobs.
  sys::HostFs provision_fs(config.provision_root);
  provision::HostProber provision_prober(provision_fs, *runner, daemon::DefaultProbeOptions());
  provision::JobGuardedBuildRunner guarded_builds(jobs, clock);
  const provision::ProvisionConfig provision_config = daemon::ProvisionConfigFor(config, guard_plan, host_fs, cgroups);
  provision::Provisioner provisioner(provision_config, *runner, clock, &guarded_builds, [&provision_prober] {
    provision::ProbeOptions options = provision_prober.defaults();
    options.default_venvs.clear();
    options.home_dir.clear();
    return provision::FactsFromProbe(provision_prober.Probe(options));
  });
  agent_service.AttachProvisioner(provisioner);

  // Builds: prepared from the host's facts at each start, then governed
  // live in their cgroups (no cgroups: they run, ungoverned).
  std::unique_ptr<build::BuildWatch> build_watch = daemon::StartBuildWatch(
      config.state_dir, jobs, event_log, guard_plan, job_options.cgroups, *processes, host_fs, clock);
  agent_service.AttachBuilds({
      .prepare = [&host_fs, &guard_plan, cgroups, &sampler](train::JobSpec& spec) {
        return daemon::PrepareBuildSpec(spec, daemon::ReadBuildHostFacts(host_fs, guard_plan, cgroups, sampler));
      },
      .status = [&build_watch](const std::string& run_id) {
        return build_watch ? build_watch->Stats(run_id) : std::nullopt;
      },
  });

  Result<std::unique_ptr<daemon::AgentServer>> server =
      daemon::AgentServer::Start(config, {&agent_service});
  if (!server.ok()) {
    spdlog::error("{}", server.status().message());
    return kExitStartFailed;
  }
  for (const std::string& addr : (*server)->bound()) spdlog::info("gpuctld {} serving on {}", GPUCTL_VERSION, addr);

  // Self-protection: the kernel never picks the agent, and its pages stay in RAM.
  if (Status s = sys::SetOomScoreAdj(host_fs, sys::SelfPid(), -1000); !s.ok()) spdlog::warn("{}", s.message());
  if (config.lock_memory) {
    sys::WarmStack();
    if (Status s = sys::LockAllMemory(); !s.ok()) spdlog::warn("{}", s.message());
  }
  // /metrics: after the gRPC server, so a bad address fails the start the
  // same way. The guard's counters are fed from its events as published.
  daemon::GuardMetrics guard_metrics;
  std::unique_ptr<daemon::MetricsServer> metrics_server;
  if (!config.metrics_listen.empty()) {
    Result<std::unique_ptr<daemon::MetricsServer>> metrics = daemon::MetricsServer::Start(
        {.listen = config.metrics_listen,
         .tls_cert = config.tls_cert,
         .tls_key = config.tls_key,
         .tls_client_ca = config.tls_client_ca,
         .state_dir = config.state_dir},
        daemon::AgentMetricsSource(sampler, agent_service, host_fs, clock), guard_metrics.registry());
    if (!metrics.ok()) {
      spdlog::error("{}", metrics.status().message());
      (*server)->Shutdown(clock.WallNow() + std::chrono::milliseconds(500));
      return kExitStartFailed;
    }
    metrics_server = std::move(*metrics);
    spdlog::info("metrics at {}", metrics_server->url());
  }
  daemon::JobsForGuard jobs_for_guard(jobs, [&build_watch](const std::string& run_id) {
    return build_watch && build_watch->Relieve(run_id);
  });
  std::unique_ptr<guard::MemoryGuard> memory_guard;
  if (guard_plan) {
    guard::MemoryGuardDeps deps{
        .fs = host_fs,
        .cgroups = cgroups,
        .processes = *processes,
        .clock = clock,
        .work = jobs_for_guard,
        .publish =
            [&event_log, &guard_metrics](guard::GuardEvent e) {
              guard_metrics.Observe(e.kind, e.fields);
              event_log.Publish({.kind = std::move(e.kind), .job = std::move(e.job),
                                 .message = std::move(e.message), .fields = std::move(e.fields)});
            },
        // The watchdog is fed from the guard loop itself: a hung guard gets
        // the agent restarted by systemd.
        .heartbeat = daemon::WatchdogHeartbeat(clock, sys::WatchdogInterval(), [] { sys::NotifyWatchdog(); }),
        .agent_pid = sys::SelfPid(),
    };
    memory_guard = std::make_unique<guard::MemoryGuard>(
        guard_plan->config, deps, daemon::MakePressureWaiter(*guard_plan, host_fs, cgroups));
    memory_guard->Start();
  }
  std::unique_ptr<sys::WatchdogFeeder> watchdog_feeder;
  if (!memory_guard) {
    if (auto interval = sys::WatchdogInterval()) watchdog_feeder = std::make_unique<sys::WatchdogFeeder>(*interval);
  }
  sys::NotifyReady();

  int sig = sys::WaitForShutdownSignal();
  spdlog::info("received signal {}, shutting down", sig);
  // Streams first (they would hold the server open), then the server with a
  // deadline well inside the 2 s promise.
  sys::NotifyStopping();
  if (memory_guard) memory_guard->Stop();
  metrics_server.reset();
  if (build_watch) build_watch->Stop();  // resumes what it paused
  watchdog_feeder.reset();
  health_hub.Stop();
  event_log.EndSubscriptions();
  agent_service.EndStreams();  // log followers too, waiting on a quiet file
  // Calls waiting on a job (a stop in its grace) answer now; the server's
  // shutdown waits for every call to finish.
  jobs.Shutdown();
  // Every stream is ended and every call waiting on a job woken by now: the
  // deadline only covers clients that do not close their connections.
  (*server)->Shutdown(clock.WallNow() + std::chrono::milliseconds(500));
  job_calls.Shutdown();
  slow_calls.Shutdown();
  // A provisioning command in flight (dpkg) is left to finish, not killed.
  if (!provisioner.StopAndWait(std::chrono::milliseconds(500))) {
    // The run's thread still uses the runner, the supervisor and the stream;
    // destroying them under it would be undefined. Nothing is left to save
    // (state.json is written at each step), so leave without destructors.
    spdlog::warn("a provisioning command is still running; it is left to finish on its own");
    spdlog::shutdown();
    std::_Exit(0);
  }
  jobs.Shutdown();  // the jobs themselves keep running in tmux
  spdlog::info("stopped");
  spdlog::shutdown();
  return 0;
}
