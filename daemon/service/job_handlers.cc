// The Agent service's job RPCs: translate, call the JobSupervisor, translate back.
#include "daemon/service/agent_service.h"
#include "daemon/service/job_convert.h"
#include "daemon/service/log_stream.h"
#include "daemon/service/status_convert.h"

namespace gpuctl::daemon {
namespace {

constexpr std::chrono::milliseconds kDefaultStopGrace{10'000};

grpc::ServerUnaryReactor* FinishWith(grpc::CallbackServerContext* context, const Result<train::JobRecord>& job,
                                     v1::Job* response) {
  grpc::ServerUnaryReactor* reactor = context->DefaultReactor();
  if (!job.ok()) {
    reactor->Finish(ToGrpcStatus(job.status()));
  } else {
    ToProto(*job, *response);
    reactor->Finish(grpc::Status::OK);
  }
  return reactor;
}

}  // namespace

grpc::ServerUnaryReactor* AgentService::StartJob(grpc::CallbackServerContext* context,
                                                 const v1::StartJobRequest* request, v1::Job* response) {
  return FinishWith(context, jobs_.StartJob(FromProto(request->spec())), response);
}

grpc::ServerUnaryReactor* AgentService::GetJob(grpc::CallbackServerContext* context,
                                               const v1::GetJobRequest* request, v1::Job* response) {
  return FinishWith(context, jobs_.GetJob(request->name()), response);
}

grpc::ServerUnaryReactor* AgentService::ListJobs(grpc::CallbackServerContext* context,
                                                 const v1::ListJobsRequest* /*request*/,
                                                 v1::ListJobsResponse* response) {
  for (const train::JobRecord& job : jobs_.ListJobs()) ToProto(job, *response->add_jobs());
  grpc::ServerUnaryReactor* reactor = context->DefaultReactor();
  reactor->Finish(grpc::Status::OK);
  return reactor;
}

grpc::ServerUnaryReactor* AgentService::StopJob(grpc::CallbackServerContext* context,
                                                const v1::StopJobRequest* request, v1::Job* response) {
  grpc::ServerUnaryReactor* reactor = context->DefaultReactor();
  std::string name = request->name();
  auto grace = request->grace_ms() == 0 ? kDefaultStopGrace : std::chrono::milliseconds(request->grace_ms());
  // Stopping waits out the grace period: not on a gRPC thread.
  bool posted = slow_calls_.Post([this, reactor, response, name, grace] {
    Result<train::JobRecord> job = jobs_.StopJob(name, grace);
    if (!job.ok()) {
      reactor->Finish(ToGrpcStatus(job.status()));
      return;
    }
    ToProto(*job, *response);
    reactor->Finish(grpc::Status::OK);
  });
  if (!posted) {
    reactor->Finish(grpc::Status(grpc::StatusCode::RESOURCE_EXHAUSTED, "too many stops in progress; retry shortly"));
  }
  return reactor;
}

grpc::ServerWriteReactor<v1::LogChunk>* AgentService::StreamLogs(grpc::CallbackServerContext* /*context*/,
                                                                  const v1::StreamLogsRequest* request) {
  train::LogFollowOptions options;
  options.job = request->name();
  options.from_offset = request->from_offset();
  options.tail_lines = request->tail_lines();
  options.follow = request->follow();
  return new LogStreamReactor(jobs_, std::move(options));
}

}  // namespace gpuctl::daemon
