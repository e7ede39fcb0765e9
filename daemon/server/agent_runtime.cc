#include "daemon/server/agent_runtime.h"

#include <spdlog/spdlog.h>

#include "agents/provision/plan_facts.h"
#include "agents/sys/files.h"
#include "agents/sys/self_protection.h"
#include "daemon/metrics/agent_metrics.h"
#include "daemon/server/agent_startup.h"
#include "daemon/server/build_setup.h"
#include "daemon/service/probe_convert.h"

namespace gpuctl::daemon {

Result<std::unique_ptr<AgentRuntime>> AgentRuntime::Start(const DaemonConfig& config) {
  std::unique_ptr<AgentRuntime> runtime(new AgentRuntime(config));
  if (Status s = runtime->StartParts(); !s.ok()) return s;
  return runtime;
}

Status AgentRuntime::StartParts() {
  const DaemonConfig& config = config_;
  // Early, so every part built below can publish to it. Kept on disk, so
  // events and their seq survive restarts.
  Result<std::unique_ptr<events::EventJournal>> journal = events::EventJournal::Open(config.state_dir + "/events");
  if (!journal.ok()) spdlog::warn("events are kept in memory only: {}", journal.status().message());
  event_log_ = std::make_unique<events::EventLog>(clock_, events::EventLog::kDefaultCapacity,
                                                  journal.ok() ? std::move(journal).value() : nullptr);
  runner_ = sys::MakeSubprocessRunner();
  gpu_reader_ = sys::MakeGpuReader({.nvml_library = config.nvml_library, .nvidia_smi = config.nvidia_smi}, *runner_);
  sampler_ = std::make_unique<health::HealthSampler>(host_fs_, *gpu_reader_, clock_,
                                                     std::chrono::milliseconds(config.gpu_max_age_ms));
  health_hub_ = std::make_unique<HealthWatchHub>([this] { return SampleHealthProto(*sampler_); }, clock_);
  tmux_ = sys::MakeTmux(*runner_, config.tmux_socket);
  processes_ = sys::MakeProcessControl(host_fs_);

  // The guard's plan is checked before anything starts: bad settings refuse
  // the start instead of surfacing at kill time.
  if (Result<std::unique_ptr<sys::CgroupDriver>> driver = sys::MakeCgroupDriver(host_fs_, *processes_); driver.ok()) {
    cgroup_driver_ = std::move(driver).value();
    cgroups_ = cgroup_driver_.get();
  }
  Result<std::optional<GuardPlan>> guard_plan = PlanGuardIfOn(config, host_fs_, cgroups_);
  if (!guard_plan.ok()) return guard_plan.status();
  guard_plan_ = std::move(guard_plan).value();
  train::JobSupervisorOptions job_options = JobOptionsFor(config, guard_plan_, cgroups_, sys::HomeDirectory());
  job_cgroups_ = job_options.cgroups;
  job_options.publish = [this](std::string kind, std::string job, std::string message, nlohmann::json fields) {
    event_log_->Publish({.kind = std::move(kind), .job = std::move(job), .message = std::move(message),
                         .fields = std::move(fields)});
  };
  // Each job's GPU memory from the health sampler's (cached) GPU reading.
  job_options.read_gpus = [this] {
    Result<health::HealthSnapshot> snapshot = sampler_->Sample();
    return snapshot.ok() ? snapshot->gpus : sys::GpuReport{};
  };
  jobs_ = std::make_unique<train::JobSupervisor>(job_options, *tmux_, *processes_, *runner_, clock_);
  jobs_->Start();
  job_calls_ = std::make_unique<WorkQueue>(/*workers=*/4, /*max_queued=*/64);
  slow_calls_ = std::make_unique<WorkQueue>(/*workers=*/2, /*max_queued=*/32);
  prober_ = std::make_unique<provision::HostProber>(host_fs_, *runner_, DefaultProbeOptions());
  agent_service_ = std::make_unique<AgentService>(*sampler_, *health_hub_, *jobs_, *job_calls_, *slow_calls_,
                                                  *event_log_, *prober_, static_cast<size_t>(config.max_log_streams));
  StartProvisioning();
  StartBuilds();
  gpu_faults_ = std::make_unique<GpuFaults>(config.state_dir, config.kernel_log, *sampler_, *jobs_, *event_log_, clock_);
  agent_service_->AttachGpuDrains({
      .drain = [this](const std::string& gpu, const std::string& reason) { return gpu_faults_->Drain(gpu, reason); },
      .undrain = [this](const std::string& gpu, bool force) { return gpu_faults_->Undrain(gpu, force); },
  });

  Result<std::unique_ptr<AgentServer>> server = AgentServer::Start(config, {agent_service_.get()});
  if (!server.ok()) return FailedPrecondition(server.status().message());
  server_ = std::move(server).value();
  for (const std::string& addr : server_->bound()) spdlog::info("gpuctld {} serving on {}", GPUCTL_VERSION, addr);

  // Self-protection: the kernel never picks the agent, and its pages stay in RAM.
  if (Status s = sys::ProtectAgentFromOomKiller(host_fs_, sys::SelfPid()); !s.ok()) spdlog::warn("{}", s.message());
  if (config.lock_memory) {
    sys::WarmStack();
    if (Status s = sys::LockAllMemory(); !s.ok()) spdlog::warn("{}", s.message());
  }
  if (Status s = StartMetrics(); !s.ok()) {
    server_->Shutdown(clock_.WallNow() + std::chrono::milliseconds(500));
    return s;
  }
  StartGuard();
  return Status::Ok();
}

// Provisioning: facts from a probe under --provision-root (without venv
// imports: the steps ask the venv themselves), extension builds as jobs.
void AgentRuntime::StartProvisioning() {
  provision_fs_ = std::make_unique<sys::HostFs>(config_.provision_root);
  provision_prober_ = std::make_unique<provision::HostProber>(*provision_fs_, *runner_, DefaultProbeOptions());
  guarded_builds_ = std::make_unique<provision::JobGuardedBuildRunner>(*jobs_, clock_);
  provisioner_ = std::make_unique<provision::Provisioner>(
      ProvisionConfigFor(config_, guard_plan_, host_fs_, cgroups_), *runner_, clock_, guarded_builds_.get(), [this] {
        provision::ProbeOptions options = provision_prober_->defaults();
        options.default_venvs.clear();
        options.home_dir.clear();
        // Without them a GPU whose PCI name is unknown (no pci.ids, as on the
        // H200 test host) left the ext step building all five default archs.
        AddDriverAnswers(options, *sampler_);
        return provision::FactsFromProbe(provision_prober_->Probe(options));
      });
  agent_service_->AttachProvisioner(*provisioner_);
}

// Builds: prepared from the host's facts at each start, then governed live
// in their cgroups (no cgroups: refused, saying why).
void AgentRuntime::StartBuilds() {
  build_watch_ = StartBuildWatch(config_.state_dir, *jobs_, *event_log_, guard_plan_, job_cgroups_, *processes_,
                                 host_fs_, clock_);
  agent_service_->AttachBuilds({
      .prepare = [this](train::JobSpec& spec) {
        // The user's arguments first (a bad one is exit 2 on any agent).
        Status prepared = PrepareBuildSpec(spec, ReadBuildHostFacts(host_fs_, guard_plan_, cgroups_, *sampler_));
        if (!prepared.ok()) return prepared;
        return BuildsCanBeGoverned(guard_plan_, job_cgroups_);  // the watch runs exactly when these exist
      },
      .status = [this](const std::string& run_id) {
        return build_watch_ ? build_watch_->Stats(run_id) : std::nullopt;
      },
  });
}

// /metrics: after the gRPC server, so a bad address fails the start the same
// way. The guard's counters are fed from its events as published.
Status AgentRuntime::StartMetrics() {
  if (config_.metrics_listen.empty()) return Status::Ok();
  Result<std::unique_ptr<MetricsServer>> metrics = MetricsServer::Start(
      {.listen = config_.metrics_listen,
       .tls_cert = config_.tls_cert,
       .tls_key = config_.tls_key,
       .tls_client_ca = config_.tls_client_ca,
       .state_dir = config_.state_dir},
      AgentMetricsSource(*sampler_, *agent_service_, host_fs_, clock_), guard_metrics_.registry());
  if (!metrics.ok()) return FailedPrecondition(metrics.status().message());
  metrics_server_ = std::move(metrics).value();
  spdlog::info("metrics at {}", metrics_server_->url());
  return Status::Ok();
}

void AgentRuntime::StartGuard() {
  jobs_for_guard_ = std::make_unique<JobsForGuard>(*jobs_, [this](const std::string& run_id) {
    return build_watch_ && build_watch_->Relieve(run_id);
  });
  if (guard_plan_) {
    guard::MemoryGuardDeps deps{
        .fs = host_fs_,
        .cgroups = cgroups_,
        .processes = *processes_,
        .clock = clock_,
        .work = *jobs_for_guard_,
        .publish =
            [this](guard::GuardEvent e) {
              guard_metrics_.Observe(e.kind, e.fields);
              event_log_->Publish({.kind = std::move(e.kind), .job = std::move(e.job),
                                   .message = std::move(e.message), .fields = std::move(e.fields)});
            },
        // The watchdog is fed from the guard loop itself: a hung guard gets
        // the agent restarted by systemd.
        .heartbeat = WatchdogHeartbeat(clock_, sys::WatchdogInterval(), [] { sys::NotifyWatchdog(); }),
        .agent_pid = sys::SelfPid(),
    };
    memory_guard_ = std::make_unique<guard::MemoryGuard>(guard_plan_->config, deps,
                                                         MakePressureWaiter(*guard_plan_, host_fs_, cgroups_));
    memory_guard_->Start();
  } else if (auto interval = sys::WatchdogInterval()) {
    watchdog_feeder_ = std::make_unique<sys::WatchdogFeeder>(*interval);
  }
}

AgentRuntime::Stopped AgentRuntime::Stop() {
  // Streams first (they would hold the server open), then the server with a
  // deadline well inside the 2 s promise.
  if (memory_guard_) memory_guard_->Stop();
  metrics_server_.reset();
  if (build_watch_) build_watch_->Stop();  // resumes what it paused
  watchdog_feeder_.reset();
  health_hub_->Stop();
  event_log_->EndSubscriptions();
  agent_service_->EndStreams();  // log followers too, waiting on a quiet file
  if (gpu_faults_) gpu_faults_->Stop();  // it stops jobs on faulted GPUs: not past this
  // Calls waiting on a job (a stop in its grace) answer now; the server's
  // shutdown waits for every call to finish.
  jobs_->Shutdown();
  // Every stream is ended and every call waiting on a job woken by now: the
  // deadline only covers clients that do not close their connections.
  server_->Shutdown(clock_.WallNow() + std::chrono::milliseconds(500));
  job_calls_->Shutdown();
  slow_calls_->Shutdown();
  // A provisioning command in flight (dpkg) is left to finish, not killed.
  if (!provisioner_->StopAndWait(std::chrono::milliseconds(500))) return Stopped::kProvisioningStillRunning;
  jobs_->Shutdown();  // the jobs themselves keep running in tmux
  return Stopped::kClean;
}

}  // namespace gpuctl::daemon
