// gRPC glue for the Agent service: translates requests to calls on the
// agents' plain interfaces and results back to the wire. No logic lives here.
#pragma once

#include <grpcpp/grpcpp.h>

#include <functional>
#include <optional>

#include "agents/build/build_watch.h"
#include "agents/events/event_log.h"
#include "agents/health/health_sampler.h"
#include "agents/provision/provisioner.h"
#include "agents/provision/host_probe.h"
#include "agents/train/job_supervisor.h"
#include "agents/sys/file_watch_hub.h"
#include "daemon/service/health_watch.h"
#include "daemon/service/log_stream.h"
#include "daemon/service/open_streams.h"
#include "daemon/service/work_queue.h"
#include "gpuctl/v1/agent.grpc.pb.h"

namespace gpuctl::daemon {

class AgentService final : public v1::Agent::CallbackService {
 public:
  // `job_calls` runs starts, stops and removals (they wait on the job
  // supervisor); `slow_calls` runs probes. Apart, so a stop never waits
  // behind a 300 s probe, and no gRPC thread blocks on either.
  AgentService(health::HealthSampler& sampler, HealthWatchHub& health_hub, train::JobSupervisor& jobs,
               WorkQueue& job_calls, WorkQueue& slow_calls, events::EventLog& events,
               const provision::HostProber& prober, size_t max_log_streams = 2048);

  grpc::ServerUnaryReactor* GetHealth(grpc::CallbackServerContext* context,
                                      const v1::GetHealthRequest* request,
                                      v1::HealthSnapshot* response) override;
  grpc::ServerWriteReactor<v1::HealthSnapshot>* WatchHealth(
      grpc::CallbackServerContext* context, const v1::WatchHealthRequest* request) override;

  // Jobs (job_handlers.cc).
  grpc::ServerUnaryReactor* StartJob(grpc::CallbackServerContext* context, const v1::StartJobRequest* request,
                                     v1::Job* response) override;
  grpc::ServerUnaryReactor* GetJob(grpc::CallbackServerContext* context, const v1::GetJobRequest* request,
                                   v1::Job* response) override;
  grpc::ServerUnaryReactor* ListJobs(grpc::CallbackServerContext* context, const v1::ListJobsRequest* request,
                                     v1::ListJobsResponse* response) override;
  grpc::ServerUnaryReactor* StopJob(grpc::CallbackServerContext* context, const v1::StopJobRequest* request,
                                    v1::Job* response) override;
  grpc::ServerUnaryReactor* RemoveJob(grpc::CallbackServerContext* context, const v1::RemoveJobRequest* request,
                                      v1::RemoveJobResponse* response) override;
  grpc::ServerUnaryReactor* DumpJob(grpc::CallbackServerContext* context, const v1::DumpJobRequest* request,
                                    v1::DumpJobResponse* response) override;
  grpc::ServerWriteReactor<v1::LogChunk>* StreamLogs(grpc::CallbackServerContext* context,
                                                      const v1::StreamLogsRequest* request) override;

  // Events (event_handlers.cc).
  grpc::ServerWriteReactor<v1::AgentEvent>* WatchEvents(grpc::CallbackServerContext* context,
                                                        const v1::WatchEventsRequest* request) override;

  // Provisioning (provision_handlers.cc); UNIMPLEMENTED until a provisioner is attached.
  grpc::ServerWriteReactor<v1::ProvisionEvent>* Provision(grpc::CallbackServerContext* context,
                                                          const v1::ProvisionRequest* request) override;
  void AttachProvisioner(provision::Provisioner& provisioner) { provisioner_ = &provisioner; }

  // Builds (`gpuctl build`, spec kind "build"): `prepare` sets a build
  // spec's budget and environment before it starts (its errors refuse the
  // start); `status` gives the live governor's figures for a run. Unset:
  // builds are refused.
  struct BuildHooks {
    std::function<Status(train::JobSpec&)> prepare;
    std::function<std::optional<build::BuildStats>(const std::string& run_id)> status;
  };
  void AttachBuilds(BuildHooks hooks) { builds_ = std::move(hooks); }

  // GPU drains (gpu_handlers.cc): `gpu` an index, UUID or PCI bus id.
  // Unset: UNIMPLEMENTED.
  struct GpuDrainHooks {
    std::function<Result<v1::GpuDrainState>(const std::string& gpu, const std::string& reason)> drain;
    std::function<Result<v1::GpuDrainState>(const std::string& gpu, bool force)> undrain;
  };
  void AttachGpuDrains(GpuDrainHooks hooks) { gpu_drains_ = std::move(hooks); }
  grpc::ServerUnaryReactor* DrainGpu(grpc::CallbackServerContext* context, const v1::DrainGpuRequest* request,
                                     v1::GpuDrainState* response) override;
  grpc::ServerUnaryReactor* UndrainGpu(grpc::CallbackServerContext* context, const v1::UndrainGpuRequest* request,
                                       v1::GpuDrainState* response) override;

  // Shutdown, before the gRPC server's: ends every open stream (logs,
  // events, health, provisioning) with UNAVAILABLE, and every later one, so
  // none holds the server open until its deadline. Idempotent.
  void EndStreams();

  // Every job as ListJobs answers it (also what /metrics shows).
  v1::ListJobsResponse ListJobsSnapshot() const;

  // Host probe (probe_handlers.cc).
  grpc::ServerUnaryReactor* Probe(grpc::CallbackServerContext* context, const v1::ProbeRequest* request,
                                  v1::HostProbe* response) override;

 private:
  health::HealthSampler& sampler_;
  HealthWatchHub& health_hub_;
  train::JobSupervisor& jobs_;
  WorkQueue& job_calls_;
  WorkQueue& slow_calls_;
  events::EventLog& events_;
  const provision::HostProber& prober_;
  provision::Provisioner* provisioner_ = nullptr;
  BuildHooks builds_;
  GpuDrainHooks gpu_drains_;
  void FinishJob(grpc::ServerUnaryReactor* reactor, const Result<train::JobRecord>& job, v1::Job* response) const;
  void FillJob(const train::JobRecord& job, v1::Job& out) const;
  // Log streams: one watcher thread for all followers, and their cap.
  sys::FileWatchHub log_watch_;
  LogStreamSlots log_slots_;
  // Every stream still open, for EndStreams. Outlives them: the server is
  // shut down (and so every stream done) before the service goes.
  OpenStreams streams_;
};

// A health sample on the wire; the hub and GetHealth share it.
Result<v1::HealthSnapshot> SampleHealthProto(health::HealthSampler& sampler);

}  // namespace gpuctl::daemon
