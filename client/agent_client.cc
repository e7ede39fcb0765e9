#include "client/agent_client.h"

namespace gpuctl::client {

AgentClient::AgentClient(std::string address, std::chrono::milliseconds call_timeout)
    : address_(std::move(address)), call_timeout_(call_timeout) {
  grpc::ChannelArguments args;
  // Fail fast when nobody listens instead of retrying with backoff.
  args.SetInt(GRPC_ARG_INITIAL_RECONNECT_BACKOFF_MS, 100);
  args.SetInt(GRPC_ARG_MAX_RECONNECT_BACKOFF_MS, 1000);
  channel_ = grpc::CreateCustomChannel(address_, grpc::InsecureChannelCredentials(), args);
  stub_ = v1::Agent::NewStub(channel_);
}

Status AgentClient::FromGrpc(const grpc::Status& status) const {
  switch (status.error_code()) {
    case grpc::StatusCode::OK: return Status::Ok();
    case grpc::StatusCode::UNAVAILABLE:
    case grpc::StatusCode::DEADLINE_EXCEEDED:
      return Unavailable("cannot reach gpuctld at " + address_ + ": " + status.error_message() +
                         "\nStart the agent with 'gpuctld --listen " + address_ +
                         "' (or 'systemctl start gpuctld'), or point gpuctl at it with --agent ADDR or $GPUCTL_AGENT.");
    case grpc::StatusCode::INVALID_ARGUMENT: return InvalidArgument(status.error_message());
    case grpc::StatusCode::NOT_FOUND: return NotFound(status.error_message());
    case grpc::StatusCode::ALREADY_EXISTS: return Status(ErrorCode::kAlreadyExists, status.error_message());
    case grpc::StatusCode::FAILED_PRECONDITION: return FailedPrecondition(status.error_message());
    case grpc::StatusCode::PERMISSION_DENIED:
      return Status(ErrorCode::kPermissionDenied, status.error_message() + " (is the socket yours? try sudo)");
    default: return Internal("gpuctld at " + address_ + ": " + status.error_message());
  }
}

Result<v1::HealthSnapshot> AgentClient::GetHealth() {
  grpc::ClientContext context;
  context.set_deadline(std::chrono::system_clock::now() + call_timeout_);
  v1::HealthSnapshot snapshot;
  grpc::Status status = stub_->GetHealth(&context, v1::GetHealthRequest(), &snapshot);
  if (!status.ok()) return FromGrpc(status);
  return snapshot;
}

Status AgentClient::WatchHealth(std::chrono::milliseconds interval,
                                const std::function<bool(const v1::HealthSnapshot&)>& on_snapshot) {
  grpc::ClientContext context;
  v1::WatchHealthRequest request;
  request.set_interval_ms(static_cast<uint32_t>(interval.count()));
  std::unique_ptr<grpc::ClientReader<v1::HealthSnapshot>> reader = stub_->WatchHealth(&context, request);
  v1::HealthSnapshot snapshot;
  while (reader->Read(&snapshot)) {
    if (!on_snapshot(snapshot)) {
      context.TryCancel();
      reader->Finish().IgnoreError();
      return Status::Ok();
    }
  }
  return FromGrpc(reader->Finish());
}

}  // namespace gpuctl::client
