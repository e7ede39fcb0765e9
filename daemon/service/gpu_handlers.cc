// gpuctl gpu drain|undrain: on the job pool (a drain writes its file with
// an fsync; never on a gRPC thread).
#include "daemon/service/agent_service.h"
#include "daemon/service/on_pool.h"
#include "daemon/service/proto_text.h"
#include "daemon/service/status_convert.h"

namespace gpuctl::daemon {
namespace {

void FinishDrainCall(grpc::ServerUnaryReactor* reactor, Result<v1::GpuDrainState> state, v1::GpuDrainState* response) {
  if (!state.ok()) {
    reactor->Finish(ToGrpcStatus(state.status()));
    return;
  }
  *response = std::move(state).value();
  MakeStringsUtf8(*response);
  reactor->Finish(grpc::Status::OK);
}

}  // namespace

grpc::ServerUnaryReactor* AgentService::DrainGpu(grpc::CallbackServerContext* context,
                                                 const v1::DrainGpuRequest* request, v1::GpuDrainState* response) {
  if (!gpu_drains_.drain) {
    grpc::ServerUnaryReactor* reactor = context->DefaultReactor();
    reactor->Finish(grpc::Status(grpc::StatusCode::UNIMPLEMENTED, "this agent keeps no GPU drains"));
    return reactor;
  }
  return OnPool(context, job_calls_, [this, response, gpu = request->gpu(), reason = request->reason()](
                                         grpc::ServerUnaryReactor* reactor) {
    FinishDrainCall(reactor, gpu_drains_.drain(gpu, reason), response);
  });
}

grpc::ServerUnaryReactor* AgentService::UndrainGpu(grpc::CallbackServerContext* context,
                                                   const v1::UndrainGpuRequest* request, v1::GpuDrainState* response) {
  if (!gpu_drains_.undrain) {
    grpc::ServerUnaryReactor* reactor = context->DefaultReactor();
    reactor->Finish(grpc::Status(grpc::StatusCode::UNIMPLEMENTED, "this agent keeps no GPU drains"));
    return reactor;
  }
  return OnPool(context, job_calls_, [this, response, gpu = request->gpu(), force = request->force()](
                                         grpc::ServerUnaryReactor* reactor) {
    FinishDrainCall(reactor, gpu_drains_.undrain(gpu, force), response);
  });
}

}  // namespace gpuctl::daemon
