// The Agent service's Probe RPC: what the host has, for planning its
// provisioning. The probe runs programs (lspci, nvcc, each venv's python),
// so it runs on the slow-call queue, never on a gRPC thread.
#include "agents/provision/host_probe.h"
#include "daemon/service/agent_service.h"
#include "daemon/service/probe_convert.h"
#include "daemon/service/status_convert.h"

namespace gpuctl::daemon {
namespace {

constexpr size_t kMaxRequestedVenvs = 16;
constexpr size_t kMaxVenvPathLength = 4096;

// The venv paths go into argv (never a shell), but must still name a place:
// absolute, no "..", no control characters.
Status CheckVenvPaths(const v1::ProbeRequest& request) {
  if (static_cast<size_t>(request.venvs_size()) > kMaxRequestedVenvs) {
    return InvalidArgument("at most " + std::to_string(kMaxRequestedVenvs) + " venvs per probe");
  }
  for (const std::string& venv : request.venvs()) {
    bool control = false;
    for (char c : venv) control = control || static_cast<unsigned char>(c) < 0x20;
    if (venv.empty() || venv.front() != '/' || venv.size() > kMaxVenvPathLength || control ||
        venv.find("/../") != std::string::npos || venv.ends_with("/..")) {
      return InvalidArgument("venv '" + venv + "' must be an absolute path without '..' (e.g. /opt/venv)");
    }
  }
  return Status::Ok();
}

}  // namespace

grpc::ServerUnaryReactor* AgentService::Probe(grpc::CallbackServerContext* context, const v1::ProbeRequest* request,
                                              v1::HostProbe* response) {
  grpc::ServerUnaryReactor* reactor = context->DefaultReactor();
  if (Status s = CheckVenvPaths(*request); !s.ok()) {
    reactor->Finish(ToGrpcStatus(s));
    return reactor;
  }
  provision::ProbeOptions options = prober_.defaults();
  options.venvs.assign(request->venvs().begin(), request->venvs().end());
  bool posted = slow_calls_.Post([this, reactor, response, options = std::move(options)]() mutable {
    AddDriverAnswers(options, sampler_);  // the driver's own answers beat guesses
    ToProto(prober_.Probe(options), *response);
    reactor->Finish(grpc::Status::OK);
  });
  if (!posted) {
    reactor->Finish(grpc::Status(grpc::StatusCode::RESOURCE_EXHAUSTED, "the agent is busy; retry the probe shortly"));
  }
  return reactor;
}

}  // namespace gpuctl::daemon
