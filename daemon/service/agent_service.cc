#include "daemon/service/agent_service.h"

#include "daemon/service/health_convert.h"
#include "daemon/service/status_convert.h"

namespace gpuctl::daemon {

Result<v1::HealthSnapshot> SampleHealthProto(health::HealthSampler& sampler) {
  Result<health::HealthSnapshot> snapshot = sampler.Sample();
  if (!snapshot.ok()) return snapshot.status();
  v1::HealthSnapshot proto;
  ToProto(*snapshot, proto);
  return proto;
}

AgentService::AgentService(health::HealthSampler& sampler, HealthWatchHub& health_hub,
                           train::JobSupervisor& jobs, WorkQueue& job_calls, WorkQueue& slow_calls,
                           events::EventLog& events, const provision::HostProber& prober,
                           size_t max_log_streams)
    : sampler_(sampler),
      health_hub_(health_hub),
      jobs_(jobs),
      job_calls_(job_calls),
      slow_calls_(slow_calls),
      events_(events),
      prober_(prober),
      log_slots_(max_log_streams) {}

grpc::ServerUnaryReactor* AgentService::GetHealth(grpc::CallbackServerContext* context,
                                                  const v1::GetHealthRequest* /*request*/,
                                                  v1::HealthSnapshot* response) {
  grpc::ServerUnaryReactor* reactor = context->DefaultReactor();
  Result<v1::HealthSnapshot> snapshot = SampleHealthProto(sampler_);
  if (!snapshot.ok()) {
    reactor->Finish(ToGrpcStatus(snapshot.status()));
    return reactor;
  }
  *response = std::move(snapshot).value();
  reactor->Finish(grpc::Status::OK);
  return reactor;
}

grpc::ServerWriteReactor<v1::HealthSnapshot>* AgentService::WatchHealth(
    grpc::CallbackServerContext* /*context*/, const v1::WatchHealthRequest* request) {
  return health_hub_.Subscribe(std::chrono::milliseconds(request->interval_ms()), &streams_);
}

void AgentService::EndStreams() {
  streams_.EndAll(grpc::Status(grpc::StatusCode::UNAVAILABLE, "gpuctld is shutting down"));
}

}  // namespace gpuctl::daemon
