#include "client/agent_client.h"

#include <algorithm>
#include <set>

#include "agents/sys/clock.h"
#include "common/units.h"

namespace gpuctl::client {

namespace {

// A safety stop for a job list that would never end (a misbehaving agent):
// at 1 MiB a page, far beyond any real host.
constexpr int kMaxListPages = 4096;

// Reads a server stream to its end, or until `on_message` says stop (then it
// is cancelled and that counts as OK). A cancel we did not ask for is the
// agent closing its streams as it stops: for the caller, the agent went away.
template <typename Message>
grpc::Status DrainStream(grpc::ClientContext& context, grpc::ClientReader<Message>& reader,
                         const std::function<bool(const Message&)>& on_message) {
  Message message;
  while (reader.Read(&message)) {
    if (!on_message(message)) {
      context.TryCancel();
      reader.Finish().IgnoreError();
      return grpc::Status::OK;
    }
  }
  grpc::Status status = reader.Finish();
  if (status.error_code() == grpc::StatusCode::CANCELLED) {
    return grpc::Status(grpc::StatusCode::UNAVAILABLE, "the agent closed the stream (" + status.error_message() + ")");
  }
  return status;
}

}  // namespace

namespace {

// Starting may wait on a container (pct exec) and tmux: more than a query.
constexpr std::chrono::milliseconds kStartJobTimeout{30'000};
// The agent answers a stop after the grace period and the SIGKILL that follows it.
constexpr std::chrono::milliseconds kStopSlack{15'000};
// Importing torch from a cold page cache takes tens of seconds per venv.
constexpr std::chrono::milliseconds kProbeTimeout{300'000};

// gRPC deadlines are wall-clock times.
std::chrono::system_clock::time_point DeadlineIn(std::chrono::milliseconds timeout) {
  return sys::RealClock().WallNow() + timeout;
}

void SetDeadline(grpc::ClientContext& context, std::chrono::milliseconds timeout) {
  context.set_deadline(DeadlineIn(timeout));
}

}  // namespace

AgentClient::AgentClient(std::string address, std::chrono::milliseconds call_timeout,
                         const ChannelSecurity* security)
    : address_(std::move(address)), call_timeout_(call_timeout) {
  grpc::ChannelArguments args;
  // Fail fast when nobody listens instead of retrying with backoff.
  args.SetInt(GRPC_ARG_INITIAL_RECONNECT_BACKOFF_MS, 100);
  args.SetInt(GRPC_ARG_MAX_RECONNECT_BACKOFF_MS, 1000);
  if (security && !security->server_name.empty()) args.SetSslTargetNameOverride(security->server_name);
  channel_ = grpc::CreateCustomChannel(
      address_, security ? security->credentials : grpc::InsecureChannelCredentials(), args);
  stub_ = v1::Agent::NewStub(channel_);
}

Status AgentClient::FromGrpc(const grpc::Status& status) const {
  switch (status.error_code()) {
    case grpc::StatusCode::OK: return Status::Ok();
    // CANCELLED: gpuctl cancels none of its calls; an agent shutting down
    // (a restart) cancels those it was serving. Unreachable (exit 3, and
    // retried by train wait), not an error the agent reported.
    case grpc::StatusCode::CANCELLED:
    case grpc::StatusCode::UNAVAILABLE:
    case grpc::StatusCode::DEADLINE_EXCEEDED:
      if (address_.rfind("unix:", 0) != 0 && (status.error_message().find("ssl") != std::string::npos ||
                                               status.error_message().find("Ssl") != std::string::npos ||
                                               status.error_message().find("SSL") != std::string::npos)) {
        return Unavailable("TLS handshake with gpuctld at " + address_ + " failed: " + status.error_message() +
                           "\nCheck that --tls-ca signed the agent's certificate (and --tls-server-name matches it), "
                           "and that the agent's --tls-client-ca signed --tls-cert.");
      }
      if (!node_.empty()) {
        return Unavailable("cannot reach gpuctld on node " + node_ + " through its SSH tunnel" +
                           (status.error_code() == grpc::StatusCode::DEADLINE_EXCEEDED
                                ? " within the call's " + FormatDuration(call_timeout_)
                                : "") +
                           ": " + status.error_message() + "\nCheck it with 'gpuctl node bootstrap " + node_ +
                           "' (starts or replaces its agent).");
      }
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

bool AgentClient::Connect(std::chrono::system_clock::time_point deadline) {
  grpc_connectivity_state state = channel_->GetState(/*try_to_connect=*/true);
  while (state != GRPC_CHANNEL_READY) {
    // READY only once the agent's HTTP/2 settings came back (not merely a
    // socket accepted, e.g. by an SSH tunnel with no agent behind it).
    if (state == GRPC_CHANNEL_TRANSIENT_FAILURE || state == GRPC_CHANNEL_SHUTDOWN) return false;
    if (!channel_->WaitForStateChange(state, deadline)) return false;
    state = channel_->GetState(/*try_to_connect=*/true);
  }
  return true;
}

Status AgentClient::FromGrpcAfterSend(const grpc::Status& status, bool connected, const std::string& what,
                                      const std::string& check) const {
  const grpc::StatusCode code = status.error_code();
  const bool lost = code == grpc::StatusCode::UNAVAILABLE || code == grpc::StatusCode::CANCELLED ||
                    code == grpc::StatusCode::DEADLINE_EXCEEDED;
  // gRPC retries a call that never left the client on a new connection; if
  // that one cannot be made the agent never had the call.
  const bool never_sent = status.error_message().find("failed to connect") != std::string::npos;
  if (!connected || !lost || never_sent) return FromGrpc(status);
  const std::string how = code == grpc::StatusCode::DEADLINE_EXCEEDED
                              ? "gpuctld at " + address_ + " did not answer in time"
                              : "the connection to gpuctld at " + address_ + " was lost during the call";
  // A node's agent is checked through the node: "'gpuctl --node N train status X'".
  std::string reach = check;
  if (!node_.empty() && reach.rfind("'gpuctl ", 0) == 0) reach.insert(8, "--node " + node_ + " ");
  return Unavailable(how + " (" + status.error_message() + "); " + what + " may have gone through: check with " +
                     reach);
}

Result<v1::HostProbe> AgentClient::Probe(const v1::ProbeRequest& request) {
  grpc::ClientContext context;
  SetDeadline(context, std::max(call_timeout_, kProbeTimeout));
  v1::HostProbe probe;
  grpc::Status status = stub_->Probe(&context, request, &probe);
  if (!status.ok()) return FromGrpc(status);
  return probe;
}

Result<v1::HealthSnapshot> AgentClient::GetHealth() {
  grpc::ClientContext context;
  SetDeadline(context, call_timeout_);
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
  auto reader = stub_->WatchHealth(&context, request);
  return FromGrpc(DrainStream(context, *reader, on_snapshot));
}

Result<v1::Job> AgentClient::StartJob(const v1::StartJobRequest& request) {
  grpc::ClientContext context;
  SetDeadline(context, std::max(call_timeout_, kStartJobTimeout));
  const bool connected = Connect(context.deadline());
  v1::Job job;
  grpc::Status status = stub_->StartJob(&context, request, &job);
  if (!status.ok()) {
    return FromGrpcAfterSend(status, connected, "the start",
                             "'gpuctl train status " + request.spec().name() + "'");
  }
  return job;
}

Result<v1::Job> AgentClient::GetJob(const std::string& name) {
  grpc::ClientContext context;
  SetDeadline(context, call_timeout_);
  v1::GetJobRequest request;
  request.set_name(name);
  v1::Job job;
  grpc::Status status = stub_->GetJob(&context, request, &job);
  if (!status.ok()) return FromGrpc(status);
  return job;
}

Result<v1::ListJobsResponse> AgentClient::ListJobs() {
  // Page after page (each well inside the message limit), joined.
  v1::ListJobsResponse all;
  v1::ListJobsRequest request;
  std::set<std::string> names;
  for (int page = 0; page < kMaxListPages; ++page) {
    grpc::ClientContext context;
    SetDeadline(context, call_timeout_);
    v1::ListJobsResponse response;
    grpc::Status status = stub_->ListJobs(&context, request, &response);
    if (!status.ok()) return FromGrpc(status);
    // A job started again while the pages are read moves to the end of the
    // order, and may come twice: once is enough.
    for (v1::Job& job : *response.mutable_jobs()) {
      if (names.insert(job.spec().name()).second) *all.add_jobs() = std::move(job);
    }
    if (response.next_page_token().empty() || response.next_page_token() == request.page_token()) return all;
    request.set_page_token(response.next_page_token());
  }
  return Unavailable("the agent's job list did not end after " + std::to_string(kMaxListPages) + " pages");
}

Result<v1::Job> AgentClient::StopJob(const std::string& name, std::chrono::milliseconds grace) {
  grpc::ClientContext context;
  SetDeadline(context, grace + kStopSlack);
  v1::StopJobRequest request;
  request.set_name(name);
  // On the wire 0 means "the agent's default (10 s)"; a grace of 0 asked for
  // here means SIGKILL at once, the nearest of which is 1 ms.
  request.set_grace_ms(static_cast<uint32_t>(std::clamp<int64_t>(grace.count(), 1, UINT32_MAX)));
  const bool connected = Connect(DeadlineIn(call_timeout_));
  v1::Job job;
  grpc::Status status = stub_->StopJob(&context, request, &job);
  if (!status.ok()) return FromGrpcAfterSend(status, connected, "the stop", "'gpuctl train status " + name + "'");
  return job;
}

Result<v1::RemoveJobResponse> AgentClient::RemoveJob(const std::string& name, const std::string& run_id) {
  grpc::ClientContext context;
  SetDeadline(context, call_timeout_);
  v1::RemoveJobRequest request;
  request.set_name(name);
  request.set_run_id(run_id);
  const bool connected = Connect(context.deadline());
  v1::RemoveJobResponse response;
  grpc::Status status = stub_->RemoveJob(&context, request, &response);
  if (!status.ok()) {
    return FromGrpcAfterSend(status, connected, "the removal",
                             "'gpuctl train status " + name + "' (no such job: it was removed)");
  }
  return response;
}

Result<v1::DumpJobResponse> AgentClient::DumpJob(const std::string& name) {
  grpc::ClientContext context;
  // py-spy on every process, 15 s each at worst, several at once.
  SetDeadline(context, std::max<std::chrono::milliseconds>(call_timeout_, std::chrono::seconds(120)));
  v1::DumpJobRequest request;
  request.set_name(name);
  Connect(context.deadline());
  v1::DumpJobResponse response;
  grpc::Status status = stub_->DumpJob(&context, request, &response);
  if (!status.ok()) return FromGrpc(status);
  return response;
}

Result<v1::GpuDrainState> AgentClient::DrainGpu(const std::string& gpu, const std::string& reason) {
  grpc::ClientContext context;
  SetDeadline(context, call_timeout_);
  v1::DrainGpuRequest request;
  request.set_gpu(gpu);
  request.set_reason(reason);
  Connect(context.deadline());
  v1::GpuDrainState response;
  grpc::Status status = stub_->DrainGpu(&context, request, &response);
  if (!status.ok()) return FromGrpc(status);
  return response;
}

Result<v1::GpuDrainState> AgentClient::UndrainGpu(const std::string& gpu, bool force) {
  grpc::ClientContext context;
  SetDeadline(context, call_timeout_);
  v1::UndrainGpuRequest request;
  request.set_gpu(gpu);
  request.set_force(force);
  Connect(context.deadline());
  v1::GpuDrainState response;
  grpc::Status status = stub_->UndrainGpu(&context, request, &response);
  if (!status.ok()) return FromGrpc(status);
  return response;
}

Status AgentClient::StreamLogs(const v1::StreamLogsRequest& request,
                               const std::function<bool(const v1::LogChunk&)>& on_chunk) {
  grpc::ClientContext context;
  auto reader = stub_->StreamLogs(&context, request);
  return FromGrpc(DrainStream(context, *reader, on_chunk));
}

Status AgentClient::Provision(const v1::ProvisionRequest& request,
                              const std::function<bool(const v1::ProvisionEvent&)>& on_event) {
  grpc::ClientContext context;
  const bool connected = Connect(DeadlineIn(call_timeout_));
  auto reader = stub_->Provision(&context, request);
  return FromGrpcAfterSend(DrainStream(context, *reader, on_event), connected, "provisioning (in part or whole)",
                           "'gpuctl probe', or provision again: steps already done are skipped");
}

Status AgentClient::WatchEvents(const v1::WatchEventsRequest& request,
                                const std::function<bool(const v1::AgentEvent&)>& on_event) {
  grpc::ClientContext context;
  auto reader = stub_->WatchEvents(&context, request);
  return FromGrpc(DrainStream(context, *reader, on_event));
}

}  // namespace gpuctl::client
