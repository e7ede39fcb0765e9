// The client's one door to gpuctld. Turns gRPC failures into Status values
// whose messages tell the user what to do (start the agent, check the address).
#pragma once

#include <chrono>
#include <functional>
#include <memory>
#include <string>

#include <grpcpp/grpcpp.h>

#include "client/channel_security.h"
#include "common/status.h"
#include "gpuctl/v1/agent.grpc.pb.h"

namespace gpuctl::client {

class AgentClient {
 public:
  // `address` is already normalised (see agent_address.h). No I/O happens
  // here. `security` null: an insecure channel (unix sockets only).
  explicit AgentClient(std::string address,
                       std::chrono::milliseconds call_timeout = std::chrono::seconds(10),
                       const ChannelSecurity* security = nullptr);

  const std::string& address() const { return address_; }
  // Keeps `resource` alive as long as this client: the SSH tunnel behind a
  // node's address must outlive the gRPC channel that dials it.
  void KeepAlive(std::shared_ptr<void> resource) { keepalive_ = std::move(resource); }
  // A node's agent, reached through an SSH tunnel whose local socket means
  // nothing to the user: an unreachable or silent agent is then named as
  // `node` (its name) with this advice, not by the tunnel's address.
  void NameNode(std::string node) { node_ = std::move(node); }

  Result<v1::HealthSnapshot> GetHealth();
  // Calls on_snapshot for each snapshot until it returns false, the stream
  // ends, or the agent goes away (then a kUnavailable status).
  Status WatchHealth(std::chrono::milliseconds interval,
                     const std::function<bool(const v1::HealthSnapshot&)>& on_snapshot);

  // Training jobs. Errors as FromGrpc maps them: kInvalidArgument,
  // kAlreadyExists, kFailedPrecondition (nothing was started), kNotFound (no
  // such job), kUnavailable (agent unreachable; for StartJob, StopJob and
  // RemoveJob also a connection lost during the call, whose message says it
  // may have gone through and how to check).
  Result<v1::Job> StartJob(const v1::StartJobRequest& request);
  Result<v1::Job> GetJob(const std::string& name);
  Result<v1::ListJobsResponse> ListJobs();
  // Waits up to grace + 15 s: the agent answers once the job is gone. A
  // grace of 0 kills at once.
  Result<v1::Job> StopJob(const std::string& name, std::chrono::milliseconds grace);
  // Removes an ended or unreadable job's record and log. kFailedPrecondition
  // for a job that may still run; kNotFound for no such job.
  // run_id: when not empty, only that run (a job started again is refused).
  Result<v1::RemoveJobResponse> RemoveJob(const std::string& name, const std::string& run_id = "");
  // Dumps a running job's stacks on its host (py-spy per process; may take
  // seconds). kFailedPrecondition for a job not running.
  Result<v1::DumpJobResponse> DumpJob(const std::string& name);
  // Drains a GPU (index, UUID or PCI bus id), or ends its drain; undrain is
  // kFailedPrecondition while the GPU still reads faulty, unless `force`.
  Result<v1::GpuDrainState> DrainGpu(const std::string& gpu, const std::string& reason);
  Result<v1::GpuDrainState> UndrainGpu(const std::string& gpu, bool force);
  // Calls on_chunk for each chunk until it returns false (then Ok), the
  // stream ends (the final status), or the agent goes away (kUnavailable).
  Status StreamLogs(const v1::StreamLogsRequest& request,
                    const std::function<bool(const v1::LogChunk&)>& on_chunk);

  // Agent events: calls on_event for each until it returns false (then Ok),
  // the stream ends (the final status: Ok once the backlog is sent without
  // follow), or the agent goes away (kUnavailable, also when it ends the
  // stream because it is stopping).
  Status WatchEvents(const v1::WatchEventsRequest& request,
                     const std::function<bool(const v1::AgentEvent&)>& on_event);

  // Provisioning: calls on_event for each event (the summary comes last)
  // until it returns false or the stream ends. No deadline: installs and
  // builds take as long as they take. Errors: kInvalidArgument (bad request,
  // nothing ran), kAlreadyExists (another run is in progress), kUnavailable.
  Status Provision(const v1::ProvisionRequest& request,
                   const std::function<bool(const v1::ProvisionEvent&)>& on_event);

  // The host probe. Slow (it runs each venv's python): up to kProbeTimeout.
  Result<v1::HostProbe> Probe(const v1::ProbeRequest& request);

  // Maps a gRPC status to ours; UNAVAILABLE becomes an "agent unreachable"
  // message naming the address and how to start the agent.
  Status FromGrpc(const grpc::Status& status) const;

 private:
  // Whether the channel has a connection to the agent, making one if it has
  // none, before a call that changes something: a failure after that point
  // may come after the agent acted. Fails as fast as calls do (a first
  // attempt that fails ends it), or at `deadline`.
  bool Connect(std::chrono::system_clock::time_point deadline);
  // FromGrpc for a call that changes something (StartJob, StopJob,
  // RemoveJob, Provision). When it was made on a connection (`connected`)
  // and then lost it (UNAVAILABLE, a CANCELLED we did not ask for) or ran out
  // of time (DEADLINE_EXCEEDED), the agent may have done it: still
  // kUnavailable (exit 3), but saying so and how to find out (`check`),
  // never "start the agent". Anything else as FromGrpc.
  Status FromGrpcAfterSend(const grpc::Status& status, bool connected, const std::string& what,
                           const std::string& check) const;

  std::shared_ptr<void> keepalive_;  // first member: destroyed after the channel
  std::string node_;  // NameNode; empty: a local or --agent address
  std::string address_;
  std::chrono::milliseconds call_timeout_;
  std::shared_ptr<grpc::Channel> channel_;
  std::unique_ptr<v1::Agent::Stub> stub_;
};

}  // namespace gpuctl::client
